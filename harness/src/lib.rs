//! The harness of mcp-bridge-vscode: JSONL transcripts, a scripted upstream and the VS Code /
//! Copilot client simulator (`transcripts/README.md` documents the format). The library part is
//! also shared with the integration tests of the other crates (the schema checks of frames).
//!
//! | module | job |
//! | --- | --- |
//! | `cli` | the command line; `upstream-relay` mode |
//! | `check` | `harness check`: a server as VS Code and Copilot see it, the report |
//! | `suite` | finds transcripts, runs them side by side, the summary |
//! | `format` | parses a transcript into directives |
//! | `pattern` | the partial matcher: subsets, absent members, typed wildcards, captures |
//! | `runner` | executes the directives of one transcript |
//! | `exit` | the bridge's exit code or signal within a bound, no process of its tree left |
//! | `session` | one running transcript: send, next frame, stderr |
//! | `invariants` | the global checks of every frame (reference `verify()`) |
//! | `schema` | the schema check of a frame against its own definition |
//! | `process` | the bridge process, signals, the process tree, the binaries beside the harness |
//! | `relay`, `upstream` | the scripted upstream and the tap of the fixture |
//! | `fixture` | the fixture's tool list, which the tests of every crate read |
//! | `scripted_server` | a stdio server that answers from a table (the tests of `check`) |
//! | `https` | the HTTPS fixture as the upstream (the URL form), killed or restarted by a step |
//! | `client`, `profile` | the simulator's steps and VS Code's / Copilot's frames |
//! | `vscode` | VS Code's tool ids and draft-07 check |
//! | `crowd` | many bridges at once (B33) |
//! | `soak` | `harness soak`: four bridges for minutes under a mixed workload |
//! | `report` | failure reports with a diff |
//! | `kept` | the outputs kept for the secret sweep (`MCP_STDERR_DIR`) |
//! | `jitter` | the jitter mode: seeded waits where the contract promises no order |
//! | `repeat` | `--repeat N`: shuffled passes, the failures grouped by signature |
//! | `windows` | which transcripts the `--windows` run (the Windows bridge) skips, and why |
pub(crate) mod args;
pub mod check;
pub mod cli;
pub mod client;
pub mod copilot_runtime;
pub mod crowd;
pub mod embedded;
pub mod exit;
pub mod fixture;
pub mod format;
pub mod http_client;
pub mod https;
pub mod invariants;
pub mod jitter;
pub mod kept;
pub mod pattern;
pub mod process;
pub mod profile;
pub mod relay;
pub mod repeat;
pub mod report;
pub mod runner;
pub mod schema;
pub mod scripted_server;
pub mod session;
pub mod sign_in;
pub mod skip;
// The soak reads /proc and sends POSIX signals.
#[cfg(unix)]
pub mod soak;
pub mod suite;
pub mod upstream;
pub mod vscode;
pub mod windows;
