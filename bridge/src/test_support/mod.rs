//! Helpers of the unit tests: the seeded value generator, the generators of the fuzz
//! targets, and the binaries of the build for the unit tests that run processes.

pub mod bins;
pub mod fuzz;
pub mod values;
