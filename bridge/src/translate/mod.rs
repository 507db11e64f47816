//! The pure translation core (DESIGN principle 2): value in, value out, no I/O, no clock.
//! Each rule of the contract is one function here, named by its id in the doc comment.

pub mod forward;
pub mod icons;
pub mod initialize;
pub mod level;
pub mod schema;
pub mod shape;

/// The error table moved to the bottom floor ([`crate::errors`]); this path stays for the
/// integration tests and is to be removed.
pub use crate::errors;
