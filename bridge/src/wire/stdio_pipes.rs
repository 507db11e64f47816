//! Stdin and stdout of the bridge as async pipes where they are pipes (as VS Code starts
//! the bridge), else tokio's blocking-thread stdio. A pipe on the reactor saves a hop to the
//! blocking thread pool on every frame, which is most of the bridge's round-trip overhead.
//! A pipe that the bridge writes ([`Outlet`]) also takes a frame without a task hop.

use std::any::Any;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
#[cfg(unix)]
use std::task::ready;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite};

use super::lane::TryWrite;

/// The pipe buffer that the bridge asks for (Linux): a large frame then needs 16 times fewer
/// wake-ups than with the default 64 KiB. 1 MiB is the default maximum for a process.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub const PIPE_BYTES: i32 = 1 << 20;

/// Grows the buffer of a pipe where the system allows it; a refusal changes nothing.
#[cfg(unix)]
pub fn grow_pipe<F: std::os::fd::AsFd>(fd: &F) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let _ = nix::fcntl::fcntl(fd.as_fd(), nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_BYTES));
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = fd;
    }
}

/// The input of the bridge. Call it inside the runtime.
pub fn stdin() -> Box<dyn AsyncRead + Unpin + Send> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let pipe = std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map(std::fs::File::from)
            .inspect(grow_pipe)
            .and_then(tokio::net::unix::pipe::Receiver::from_file);
        if let Ok(pipe) = pipe {
            return Box::new(pipe);
        }
    }
    Box::new(tokio::io::stdin())
}

/// The output of the bridge. Call it inside the runtime.
pub fn stdout() -> Outlet {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let pipe = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map(std::fs::File::from)
            .inspect(grow_pipe)
            .and_then(tokio::net::unix::pipe::Sender::from_file);
        if let Ok(pipe) = pipe {
            return Outlet::Pipe(Arc::new(pipe));
        }
    }
    Outlet::Stream(Box::new(tokio::io::stdout()))
}

/// The stdin of an upstream command, as a pipe on the reactor where the system allows it.
/// Call it inside the runtime.
pub fn child_stdin(stdin: tokio::process::ChildStdin) -> io::Result<Outlet> {
    #[cfg(unix)]
    {
        grow_pipe(&stdin);
        let fd = stdin.into_owned_fd()?;
        let pipe = tokio::net::unix::pipe::Sender::from_owned_fd(fd)?;
        Ok(Outlet::Pipe(Arc::new(pipe)))
    }
    #[cfg(not(unix))]
    Ok(Outlet::Stream(Box::new(stdin)))
}

/// A writable end of the bridge (its stdout, the stdin of an upstream command): a pipe on
/// the reactor, which a writer's lane also writes without waiting ([`crate::wire::lane`]),
/// or any other stream.
pub enum Outlet {
    #[cfg(unix)]
    Pipe(Arc<tokio::net::unix::pipe::Sender>),
    Stream(Box<dyn AsyncWrite + Unpin + Send>),
}

/// The handle that writes `sink` without waiting, when `sink` is an [`Outlet`] of a pipe.
/// The writers take any stream (an in-memory pipe of the embedded bridge, a test's duplex);
/// Rust has no specialization, so the pipe is recognised at run time.
pub fn direct_of<W: 'static>(sink: &W) -> Option<Arc<dyn TryWrite>> {
    match (sink as &dyn Any).downcast_ref::<Outlet>()? {
        #[cfg(unix)]
        Outlet::Pipe(pipe) => Some(Arc::clone(pipe) as Arc<dyn TryWrite>),
        Outlet::Stream(_) => None,
    }
}

impl AsyncWrite for Outlet {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            #[cfg(unix)]
            Outlet::Pipe(pipe) => loop {
                ready!(pipe.poll_write_ready(cx))?;
                match pipe.try_write(buf) {
                    // The readiness was stale; the next poll registers the waker.
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    result => return Poll::Ready(result),
                }
            },
            Outlet::Stream(stream) => Pin::new(stream).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Outlet::Pipe(_) => Poll::Ready(Ok(())),
            Outlet::Stream(stream) => Pin::new(stream).poll_flush(cx),
        }
    }

    /// A pipe closes when its last handle is dropped: the writer's, once its lane let go.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            Outlet::Pipe(_) => Poll::Ready(Ok(())),
            Outlet::Stream(stream) => Pin::new(stream).poll_shutdown(cx),
        }
    }
}
