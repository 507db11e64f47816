//! The resolver of the HTTP client (docs/options.md, the URL rule): the system's resolver
//! (getaddrinfo, as reqwest's own), and for a name that the loopback rule of the URL form
//! accepts (`localhost`, `*.localhost`) only loopback addresses. Such a name gets plain http,
//! tokens and codes by its name alone, so a hosts file or a resolver that sends it elsewhere
//! must not be followed. The client connects to the addresses returned here, so no second
//! lookup can answer otherwise.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::Host;

use crate::cli::url_rule::{Loopback, is_loopback};

/// A name of the loopback rule resolved to an address that is not a loopback address.
#[derive(Debug, thiserror::Error)]
#[error("a loopback host name resolves to an address that is not a loopback address")]
pub struct NotLoopback;

/// The resolver of [`super::build_client`].
#[derive(Debug, Default)]
pub struct CheckedResolver;

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let loopback_name = is_loopback(&Host::Domain(host.as_str()), Loopback::UrlForm);
            // getaddrinfo blocks: on the blocking pool, as reqwest's own resolver does.
            let addresses: Vec<SocketAddr> =
                tokio::task::spawn_blocking(move || (host.as_str(), 0).to_socket_addrs())
                    .await??
                    .collect();
            if loopback_name && !all_loopback(&addresses) {
                return Err(Box::new(NotLoopback) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(addresses.into_iter()) as Addrs)
        })
    }
}

/// True when every address is a loopback address (127.0.0.0/8, `::1`); an empty answer is
/// not loopback.
fn all_loopback(addresses: &[SocketAddr]) -> bool {
    !addresses.is_empty() && addresses.iter().all(|a| loopback_ip(a.ip()))
}

fn loopback_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_serve_a_loopback_name() {
        let a = |s: &str| s.parse::<SocketAddr>().expect("address");
        assert!(all_loopback(&[a("127.0.0.1:0"), a("[::1]:0")]));
        assert!(all_loopback(&[a("127.9.9.9:0")]));
        assert!(!all_loopback(&[a("127.0.0.1:0"), a("10.253.0.1:0")]));
        assert!(!all_loopback(&[a("[::ffff:127.0.0.1]:0")]));
        assert!(!all_loopback(&[]));
    }
}
