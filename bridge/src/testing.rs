//! Not part of the API (hidden, no semver): the inside that the integration tests of the
//! workspace still reach, each named here, so that the public API stays [`crate::embed`] and
//! the functions of the crate root. Each use is a candidate for a unit test of its module.

pub use crate::auth::identity::storage_key;
pub use crate::auth::store::file::FileStore;
pub use crate::auth::store::indexed::Entries;
pub use crate::auth::store::key::parse as parse_token_key;
pub use crate::auth::store::{Record, TokenStore, open_file, open_keychain};
pub use crate::front::{Hooks, Options, Outcome, serve};
pub use crate::translate::initialize::ServerInfoFallback;
pub use crate::upstream::connect::Target;
pub use crate::watchdog::{arm as arm_watchdog, exit_1_on_panic};
