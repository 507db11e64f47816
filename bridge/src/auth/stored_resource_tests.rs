//! A stored sign-in serves only the resource it was obtained for (docs/sign-in.md, "Bound to
//! the issuer"): the session of one URL never sends the access token of a record of another
//! resource that it finds under its key (a store that mixed them up, or a record of an older
//! rule that gave a tenant's sign-in the whole host).

use std::sync::Arc;
use std::time::Duration;

use super::flow::Settings;
use super::identity::storage_key;
use super::registration::ClientChoice;
use super::session::{Session, SessionOptions};
use super::store::{MemoryStore, Record, TokenStore};

const TENANT_B: &str = "https://host.example/b/mcp";

fn record(resource: &str) -> Record {
    Record {
        issuer: "https://host.example/".into(),
        resource: resource.into(),
        client_id: "c".into(),
        registered_secret: None,
        registered_method: None,
        access_token: "planted".into(),
        refresh_token: None,
        expires_at: None,
        scopes: vec![],
    }
}

/// The access token that the session of `TENANT_B` sends first, with `stored` under its key.
fn first_bearer(stored: &Record) -> Option<String> {
    let key = storage_key(TENANT_B, "default", 41894);
    let store = Arc::new(MemoryStore::default());
    store.save(&key, stored).expect("save");
    crate::install_crypto_provider();
    let session = Session::new(
        reqwest::Client::new(),
        SessionOptions {
            mcp: url::Url::parse(TENANT_B).expect("url"),
            settings: Settings {
                redirect_port: 41894,
                no_browser: true,
                timeout: Duration::from_secs(1),
                sandbox: false,
                hidden_env: vec![],
            },
            choice: ClientChoice::default(),
            key,
            store,
        },
    );
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(session.bearer())
}

#[test]
fn a_stored_sign_in_of_another_resource_is_never_sent() {
    for other in [
        "https://host.example/a/mcp",
        "https://host.example/b",
        "https://other.example/b/mcp",
    ] {
        assert_eq!(first_bearer(&record(other)), None, "{other}");
    }
    for own in [TENANT_B, "https://host.example", "https://host.example/"] {
        assert_eq!(
            first_bearer(&record(own)).as_deref(),
            Some("planted"),
            "{own}"
        );
    }
}
