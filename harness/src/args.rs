//! The parse of the command line, one for `harness` and `harness check`: both end the same way
//! on a mistake and on `--help`.
use std::process::ExitCode;

use clap::Parser;

/// The arguments of a command, or the exit code once clap has printed why not: 2 for a
/// mistake (on stderr), 0 for `--help` and `--version` (on stdout).
pub(crate) fn parse<T: Parser>(argv: &[String]) -> Result<T, ExitCode> {
    T::try_parse_from(argv).map_err(|e| {
        let _ = e.print();
        if e.use_stderr() {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        }
    })
}
