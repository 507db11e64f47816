//! The integration tests of the fixture, one test binary: each module runs the real
//! `bridge-fixture-server` binary (over pipes, or over HTTPS with the test CA of `certs/`) and
//! checks one behaviour. `support` drives the fixture over stdio, `http_support` over HTTP.
//!
//! The modules share one process: none of them sets an environment variable of the test
//! process, each fixture gets the variables it needs on its own command line, and every server
//! of a test listens on a free loopback port of its own.
#![allow(clippy::unwrap_used, reason = "tests")]

mod http_support;
mod support;

mod conformance_tools;
mod discover;
mod https;
mod input;
mod listen;
mod logging;
mod oauth;
mod process;
mod tools;
