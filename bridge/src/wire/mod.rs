//! The wire of both sides: the line reader with its limits, the parse of a line with id
//! recovery, the pass-through parse of the members that no rule reads ([`fast`], [`lazy`],
//! [`scan`]), the frames as byte pieces ([`out`]), the lane that orders the frames of one sink ([`lane`]), and the single writer
//! of stdout, and stdin / stdout / the upstream command's stdin as async pipes
//! ([`stdio_pipes`]).

pub mod escape;
pub mod fast;
pub mod frames;
pub mod lane;
pub mod lazy;
pub mod out;
pub mod parse;
pub mod reader;
pub mod recover;
pub mod scan;
pub mod stdio_pipes;
pub mod surrogates;
pub mod writer;

#[cfg(test)]
mod fuzz_tests;
