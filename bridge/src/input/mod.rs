//! M2 (docs/rules.md R8): the pure rules of the input rounds of an `InputRequiredResult` against a
//! client of revision 2025-11-25 (R8, O1, O2, O3, C2 and the quirks about forms, URLs,
//! cancellations and late answers).
//! `asked` holds the same limit for the requests of an older server to VS Code (L3).
//! Value in, value out: no I/O and no clock (the one exception: `complete::ElicitationIds`
//! draws the random part of each id from the system's random source). `front::rounds` does
//! the I/O; the causes of the failures are rows of the one error table (`errors::Cause`); the
//! `b-N` ids, the cancellation frame's reasons and the time limits are the front's and
//! `translate`'s.
//!
//! Decisions where the reference is silent:
//! - `too_many_rounds` detail: `<n> rounds, limit: <m>` (the reference gives only the log line).
//! - Answer failures carry the key: `input request '<key>': <what>`.
//! - `ElicitResult` content accepts any JSON number (a `type: "number"` property can carry a
//!   fraction; the `requestedSchema` decides). Formats in a `requestedSchema` are annotations.
//! - URL rule: the WHATWG and RFC 3986 parsers must agree on scheme and host text; this also
//!   refuses `http://127.1/`, `http:localhost/`, percent-encoded and IDN hosts.
//! - An `InputRequiredResult` with neither `inputRequests` nor `requestState` is a pure retry;
//!   it ends at the round limit.

pub mod answers;
pub mod asked;
pub mod check;
pub mod complete;
pub mod error;
pub mod forms;
pub mod parse;
pub mod route;
pub mod shape;
pub mod state;
pub mod texts;
pub mod url;

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod no_panic_tests;
#[cfg(test)]
mod url_rule_fuzz_tests;
