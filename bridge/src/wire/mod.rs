//! The wire of both sides: the line reader with its limits, the parse of a line with id
//! recovery, the pass-through parse of the members that no rule reads ([`fast`], [`lazy`],
//! [`scan`]), the frames as byte pieces ([`out`]), the lane that orders the frames of one sink ([`lane`]), and the single writer
//! of stdout, and stdin / stdout / the upstream command's stdin as async pipes
//! ([`stdio_pipes`]).
//!
//! The files: [`reader`] the line reader (the limit, the head and tail of a long line);
//! [`parse`] the full parse, with id recovery in [`recover`]; [`surrogates`] lone surrogates;
//! [`escape`] the escape rules that [`scan`], [`recover`] and [`surrogates`] share; the
//! pass-through parse in [`fast`], [`lazy`] and [`scan`], and frames as byte pieces in [`out`]
//! (the success frame of a response in [`frames`]); [`writer`] the one writer type (stdout, and the upstream command's
//! stdin) and [`lane`] its lane, the one order of a sink; [`stdio_pipes`] stdin, stdout and
//! the upstream command's stdin as async pipes on the reactor, with larger pipe buffers
//! (Linux), and `Outlet`, a pipe that a lane can write without waiting.

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
