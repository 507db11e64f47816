//! The sign-in of the URL form (docs/sign-in.md): OAuth 2.1 with
//! PKCE at the authorization server of an upstream server that answers 401 or 403.
//!
//! The pieces: [`session`] keeps the sign-in of one URL for the life of the process (tokens,
//! refresh, step-up), [`token_source`] is the handle that the HTTP transport asks for the
//! access token and hands each 401 and 403 (it never sees the session), [`flow`] runs one
//! interactive sign-in, [`consent`] is the gate and the port that the front implements (this
//! module never imports the front), [`opener`] the browser opener, [`receiver`] the loopback
//! receiver with the one-time start URL (M6), [`challenge`], [`discovery`] and [`metadata`]
//! find the authorization server, [`registration`] the client, [`tokens`] the grants (the
//! `oauth2` crate), [`store`] where the tokens are kept, [`start`] makes it all from the
//! command line, [`outcome`] / [`failure`] say why a sign-in failed, and [`error_object`] is
//! the error that VS Code gets for it. The HTTP client and the bounded body read come from
//! [`crate::webclient`]; this module never imports the transport.

pub mod challenge;
pub mod consent;
pub mod discovery;
pub mod error_object;
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
#[cfg(test)]
mod stored_resource_tests;
pub mod token_source;
pub mod tokens;

pub use self::token_source::TokenSource;
