//! The sign-in of the URL form (M4, M6; the contract's "Sign-in and accounts"): OAuth 2.1 with
//! PKCE at the authorization server of an upstream server that answers 401 or 403.
//!
//! Built so far, pure and tested: [`challenge`] (the `WWW-Authenticate` challenge),
//! [`discovery`] (where the metadata is, and its checks), [`identity`] (the names and the keys
//! of stored sign-ins), [`receiver`] (the loopback receiver with the one-time start URL, M6).
//! The flow, the token stores and `logout` come next; `upstream::http` will reach them through
//! a token source, and the sign-in will ask VS Code through a port that the front implements
//! (this module never imports the front).

pub mod challenge;
pub mod consent;
pub mod discovery;
pub mod failure;
pub mod flow;
pub mod identity;
pub mod metadata;
pub mod opener;
pub mod outcome;
pub mod receiver;
pub mod registration;
pub mod session;
pub mod start;
pub mod store;
pub mod tokens;
