//! Spare buffers for large lines (a hot-path choice of bridge/README.md).
//!
//! A line of 16 MiB read into fresh memory costs one page fault per 4 KiB: measured with
//! `perf`, a third of the bridge's time on a large message went to faulting in and zeroing
//! the pages of the new line, and to unmapping them after it was written. So the buffer of a
//! large line goes back to this pool when the last piece of it is written, and the reader of
//! the next large line starts in it. The pool holds at most [`SPARES`] buffers of at most
//! [`MAX_SPARE`] bytes each, and lets them go when they were not used for a while
//! ([`age`]) and when the connection is idle ([`clear`]): a bridge keeps the memory of a
//! burst of large messages for seconds, not for its life.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;

/// A line buffer this large or larger is worth keeping (a smaller one costs few faults).
pub const MIN_SPARE: usize = 1 << 20;
/// A larger buffer is freed, not kept: a line of 16 MiB grows its buffer to 32 MiB.
pub const MAX_SPARE: usize = 32 << 20;
/// One for each direction of a large echo: the argument going up and the result coming down.
pub const SPARES: usize = 2;

static POOL: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
/// A spare was taken or given since the last [`age`].
static USED: AtomicBool = AtomicBool::new(false);

fn pool() -> std::sync::MutexGuard<'static, Vec<Vec<u8>>> {
    // A panic while the lock was held leaves at worst a buffer too few or too many.
    crate::sync::lock(&POOL)
}

/// The largest spare buffer, empty, when there is one.
pub fn take() -> Option<Vec<u8>> {
    let mut pool = pool();
    USED.store(true, Ordering::Relaxed);
    let largest = (0..pool.len()).max_by_key(|&i| pool[i].capacity())?;
    Some(pool.swap_remove(largest))
}

/// Keeps `buf` for a later large line when it is worth keeping and there is room.
pub fn give(mut buf: Vec<u8>) {
    if !(MIN_SPARE..=MAX_SPARE).contains(&buf.capacity()) {
        return;
    }
    buf.clear();
    let mut pool = pool();
    USED.store(true, Ordering::Relaxed);
    if pool.len() < SPARES {
        pool.push(buf);
    }
}

/// Frees every spare buffer (the connection is idle).
pub fn clear() {
    let spares = std::mem::take(&mut *pool());
    drop(spares);
}

/// Called every few seconds while requests come: frees the spares when none was used since
/// the last call.
pub fn age() {
    if !USED.swap(false, Ordering::Relaxed) {
        clear();
    }
}

/// The bytes of a line whose buffer returns to the pool once no piece of it is left.
pub fn into_bytes(line: Vec<u8>) -> Bytes {
    if line.capacity() >= MIN_SPARE {
        Bytes::from_owner(Pooled(line))
    } else {
        Bytes::from(line)
    }
}

/// A line buffer that goes back to the pool when dropped.
struct Pooled(Vec<u8>);

impl AsRef<[u8]> for Pooled {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        give(std::mem::take(&mut self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool is one per process; the tests of it run as one test so that they do not
    /// race.
    #[test]
    fn a_large_line_returns_its_buffer_and_the_pool_stays_bounded() {
        clear();
        let mut line = Vec::with_capacity(MIN_SPARE);
        line.extend_from_slice(b"{\"a\":1}");
        let address = line.as_ptr();
        let bytes = into_bytes(line);
        let piece = bytes.slice(1..4);
        drop(bytes);
        assert!(take().is_none(), "a piece still holds the line");
        assert_eq!(&piece[..], b"\"a\"");
        drop(piece);
        let spare = take();
        assert_eq!(
            spare.as_ref().map(Vec::as_ptr),
            Some(address),
            "the same buffer"
        );
        assert_eq!(spare.as_ref().map(Vec::len), Some(0));

        // Small and huge buffers are not kept, and at most SPARES are.
        give(Vec::with_capacity(MIN_SPARE - 1));
        give(Vec::with_capacity(MAX_SPARE + 1));
        assert!(take().is_none());
        for _ in 0..SPARES + 1 {
            give(Vec::with_capacity(MIN_SPARE));
        }
        assert_eq!(pool().len(), SPARES);
        // Spares that nobody used between two ages are freed.
        age();
        assert_eq!(pool().len(), SPARES, "used since the last age");
        age();
        assert!(take().is_none());
        // A small line is plain bytes.
        assert!(into_bytes(b"{}".to_vec()).len() == 2);
    }
}
