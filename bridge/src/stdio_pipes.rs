//! Stdin and stdout of the bridge as async pipes where they are pipes (as VS Code starts
//! the bridge), else tokio's blocking-thread stdio. A pipe on the reactor saves a hop to the
//! blocking thread pool on every frame, which is most of the bridge's round-trip overhead.

use tokio::io::{AsyncRead, AsyncWrite};

/// The pipe buffer that the bridge asks for (Linux): a large frame then needs 16 times fewer
/// wake-ups than with the default 64 KiB. 1 MiB is the default maximum for a process.
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
pub fn stdout() -> Box<dyn AsyncWrite + Unpin + Send> {
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
            return Box::new(pipe);
        }
    }
    Box::new(tokio::io::stdout())
}
