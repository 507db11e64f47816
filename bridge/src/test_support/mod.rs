//! Helpers of the unit tests: the seeded value generator, the generators of the fuzz
//! targets, the fixture server, and the child processes of the unit tests.

pub mod bins;
pub mod child;
pub mod fuzz;
pub mod values;
