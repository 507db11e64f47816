//! The one way the bridge takes a lock.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Takes the lock of `m`, also after another holder panicked. Every lock of the bridge
/// guards state that each hold leaves consistent (one insert, remove or flag at a time), so
/// a poisoned lock still holds usable data; the shipped build aborts at a panic anyway
/// (`watchdog.rs`).
pub(crate) fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
