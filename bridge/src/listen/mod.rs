//! M3 (docs/rules.md O5–O7): the pure rules of list changes, resource updates and log messages (R2, O5,
//! O6, O7 and the quirks about order).
//! The log level and the log messages (O5) live in [`crate::translate::level`]; the I/O of
//! the stream is `front::listener`.
//!
//! The files: [`filter`] the event filter; [`replay`] what the `initialize` result declares
//! ([`replay::Declared`]), the `subscriptions/listen` params, the gap replay and the
//! subscribed URIs; [`stream`] the generations of the streams; [`backoff`] the backoff and the decision at the end of a
//! stream, with its stderr line.

pub mod backoff;
pub mod filter;
pub mod replay;
pub mod stream;

#[cfg(test)]
mod declared_tests;
#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod no_panic_tests;
