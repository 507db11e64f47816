//! A unit test that must have a process of its own (it ends its process, or it needs an
//! environment of its own: the tests never set a variable of the shared test process) runs as
//! a child: this test executable runs itself with `--exact <test>` and `MCP_TEST_CHILD` set to
//! the name of the child test, which does its work only then ([`is_child`]) and returns at once
//! in the ordinary run. The child runs the code of this very build: no binary of an earlier
//! build can stand in for it.

use std::ffi::OsStr;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The variable that names the child test.
const CHILD_ENV: &str = "MCP_TEST_CHILD";

/// The bound of a child's run.
const BOUND: Duration = Duration::from_secs(20);

/// Whether this process runs the child test `name`.
pub fn is_child(name: &str) -> bool {
    std::env::var(CHILD_ENV).is_ok_and(|v| v == name)
}

/// How a child ended.
pub struct Ran {
    /// Its exit code (none after a signal).
    pub code: Option<i32>,
    /// Its stderr, complete: every process holding it is gone.
    pub stderr: String,
    /// The time to its exit.
    pub took: Duration,
}

/// Runs the child test `name` of the module `module` (the caller's `module_path!()`) with
/// `env` (a `None` value removes the variable); stdin is at its end, stdout is dropped.
pub fn run_child(module: &str, name: &str, env: &[(&str, Option<&OsStr>)]) -> Ran {
    // The test binary lists a test as `<module>::<name>`, the crate's name left out.
    let test = match module.split_once("::") {
        Some((_, module)) => format!("{module}::{name}"),
        None => name.to_owned(),
    };
    let mut command = Command::new(std::env::current_exe().expect("test executable"));
    command
        .args(["--exact", &test, "--nocapture", "--test-threads", "1"])
        .env(CHILD_ENV, name)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (var, value) in env {
        match value {
            Some(value) => command.env(var, value),
            None => command.env_remove(var),
        };
    }
    let mut child = command.spawn().expect("the child test starts");
    let started = Instant::now();
    let mut stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        let _ = tx.send(text);
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if started.elapsed() > BOUND {
            let _ = child.kill();
            panic!("the child test {test} did not exit");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = started.elapsed();
    let stderr = rx
        .recv_timeout(Duration::from_secs(2))
        .expect("no process of the child's tree holds stderr (the upstream group is killed)");
    Ran {
        code: status.code(),
        stderr,
        took,
    }
}
