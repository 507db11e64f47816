//! The pure translation core (docs/architecture.md principle 2): value in, value out, no I/O, no clock.
//! Each rule of docs/rules.md is one function here, named by its id in the doc comment.
//!
//! The files: [`initialize`] the `initialize` result from `server/discover` (R1); [`forward`]
//! the method classes, the params of a forwarded request and the time limit of each class; [`shape`] the result
//! shapes; [`schema`] the repair of tool schemas (R6); [`icons`] the `data:` icons; [`level`]
//! the one log-level module (`logging/setLevel`, the `_meta` key, the message filter);
//! [`older`] the rules of an older upstream server (L1-L3: the answers that tell one, the
//! revisions that the bridge relays).

pub mod forward;
pub mod icons;
pub mod initialize;
pub mod level;
pub mod older;
pub mod schema;
pub mod shape;

#[cfg(test)]
mod fuzz_tests;
