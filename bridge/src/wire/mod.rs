//! The wire of both sides: the line reader with its limits, the parse of a line with id
//! recovery, and the single writer of stdout.

pub mod frames;
pub mod parse;
pub mod reader;
pub mod recover;
pub mod surrogates;
pub mod writer;
