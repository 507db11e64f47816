//! The integration tests of the fixture, one test binary: each module runs the real
//! `bridge-fixture-server` binary (over pipes, or over HTTPS with the test CA of `certs/`) and
//! checks one behaviour. `support` drives the fixture over stdio, `http_support` over HTTP.
//!
//! The modules share one process: none of them sets an environment variable of the test
//! process, each fixture gets the variables it needs on its own command line, and every server
//! of a test listens on a free loopback port of its own.
// clippy.toml's allow-unwrap-in-tests covers #[test] functions only; the helpers of an
// integration test binary are test code too, and a test fails by its panic.
#![allow(clippy::unwrap_used)]

mod http_support;
mod support;

mod conformance_tools;
mod discover;
mod dual;
mod embedded_pki;
mod https;
mod input;
mod listen;
mod logging;
mod oauth;
mod older;
mod older_http;
mod process;
mod start_delay;
mod tools;
