//! Helpers of the unit tests: the seeded value generator and the generators of the fuzz
//! targets.

pub mod fuzz;
pub mod values;
