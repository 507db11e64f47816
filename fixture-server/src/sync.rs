//! The one way the fixture locks a mutex.
use std::sync::{Mutex, MutexGuard};

/// Locks a mutex; a poisoned lock still gives its value (a panic elsewhere must not stop the
/// server).
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
