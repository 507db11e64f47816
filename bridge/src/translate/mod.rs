//! The pure translation core (DESIGN principle 2): value in, value out, no I/O, no clock.
//! Each rule of the contract is one function here, named by its id in the doc comment.

pub mod errors;
pub mod forward;
pub mod icons;
pub mod initialize;
pub mod level;
pub mod schema;
pub mod shape;
pub mod sign_in;

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod lossless_tests;
