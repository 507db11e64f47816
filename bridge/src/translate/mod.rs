//! The pure translation core (docs/architecture.md principle 2): value in, value out, no I/O, no clock.
//! Each rule of docs/rules.md is one function here, named by its id in the doc comment.

pub mod forward;
pub mod icons;
pub mod initialize;
pub mod level;
pub mod older;
pub mod schema;
pub mod shape;

#[cfg(test)]
mod fuzz_tests;
