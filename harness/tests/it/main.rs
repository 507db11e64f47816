//! The integration tests of the harness, one test binary: `harness check` against real servers
//! and the scripted upstream's relay over loopback TCP. Both run the built binaries as child
//! processes with their own environment; nothing here changes the environment of the test
//! process.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bins;

mod check;
mod relay_tcp;
