//! The tools, resources and prompts that the server scenarios of the official MCP conformance
//! suite (`@modelcontextprotocol/conformance`) call, under the names that the suite uses
//! (`test_simple_text`, `test://static-text`, `test_simple_prompt`, ...). They exist only with
//! `--conformance`, apart from the fixture's own tools, so that the transcripts and tests of the
//! bridge never see them.
//!
//! The behaviour of each one is what the suite's scenario checks; the texts follow the
//! scenario's description. The input requests (elicitation, sampling, roots) are rounds of
//! revision 2026-07-28 (`InputRequiredResult`): the fixture is a 2026-07-28 server, and the
//! bridge turns them into the requests of 2025-11-25 for VS Code.
pub mod forms;
pub mod prompts;
pub mod resources;
pub mod tools;

/// A 1x1 red pixel, PNG, base64.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV file without samples (8 kHz, 8 bit, mono), base64.
pub const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";
