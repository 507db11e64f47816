//! The HTTP floor of the URL form, under the sign-in ([`crate::auth`]) and the transport
//! ([`crate::upstream::http`]) alike: the client (rustls with the system's CAs and those of
//! `--ca-file`, the proxies, never a proxy for a loopback host, and a loopback name only at
//! loopback addresses), the crypto provider, a body
//! read up to a limit, and the text of an error without its URL. It knows neither the sign-in
//! nor MCP.
//!
//! The files: `client.rs` the HTTP client with its CAs and proxies, the crypto provider and the
//! text of an error without its URL;
//! `resolve.rs` the resolver (a loopback name resolves to loopback addresses only);
//! `body.rs` the bounded body read.

mod body;
mod client;
mod resolve;

pub use self::body::{BodyError, read_body};
pub use self::client::{
    ClientError, ClientOptions, build_client, describe, install_crypto_provider, load_ca_file,
};
