//! The integration tests of the harness, one test binary: the check that the docs name only
//! what exists (`doc_paths`), and `harness check` against real servers
//! and the scripted upstream's relay over loopback TCP. Both run the built binaries as child
//! processes with their own environment; nothing here changes the environment of the test
//! process.
// clippy.toml's allow-unwrap-in-tests covers #[test] functions only; the helpers of an
// integration test binary are test code too, and a test fails by its panic.
#![allow(clippy::unwrap_used)]

mod bins;

mod check;
mod check_ids;
mod check_report;
mod check_starts;
mod doc_paths;
mod early_end;
mod relay_tcp;
mod usage;
