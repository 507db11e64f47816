//! L1: the revision that one upstream connection speaks, as a negotiated value of the
//! connection (the protocol version is one in an SDK's one service). Every connection starts
//! as [`Dialect::Modern`] (the bridge asks `server/discover`); the front turns it to
//! [`Dialect::Older`] once, before it sends VS Code's `initialize` upstream.
//!
//! What the dialect changes, and nothing else (docs/architecture.md, "Words"):
//! - the request frame: the `_meta` envelope of 2026-07-28 (R1, R3), or VS Code's params as
//!   received with the bridge's progress token (L2);
//! - the server's requests: a server of 2026-07-28 sends none (dropped with a debug line), an
//!   older one asks VS Code (L3);
//! - the server's `notifications/cancelled`: it ends a listen stream (M3), or gives up one of
//!   the older server's requests to VS Code (L3);
//! - the messages that are no requests (`notifications/initialized`, the answers to the
//!   server's requests): only an older connection has them.

use std::sync::atomic::{AtomicU8, Ordering};

/// The revision of an upstream connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Revision 2026-07-28: stateless, `server/discover`, `_meta` on every request.
    Modern,
    /// Revision 2025-11-25 or older: the `initialize` handshake, requests of the server.
    Older,
}

/// The dialect of one connection, set once by the front (L1) and read by the client's
/// router and its requests.
#[derive(Debug, Default)]
pub struct DialectCell(AtomicU8);

impl DialectCell {
    pub fn get(&self) -> Dialect {
        match self.0.load(Ordering::Acquire) {
            0 => Dialect::Modern,
            _ => Dialect::Older,
        }
    }

    pub fn set(&self, dialect: Dialect) {
        let value = match dialect {
            Dialect::Modern => 0,
            Dialect::Older => 1,
        };
        self.0.store(value, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn l1_a_connection_starts_modern_and_turns_older_once_told() {
        let cell = DialectCell::default();
        assert_eq!(cell.get(), Dialect::Modern);
        cell.set(Dialect::Older);
        assert_eq!(cell.get(), Dialect::Older);
    }
}
