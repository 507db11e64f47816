//! The bridge's own secrets of a start (docs/secrets.md): the uses of the command line, where
//! they would go, and the environment of the upstream command. Only the child gets the
//! values of `--secret-env` (never the bridge's own environment, so never the browser opener
//! of a sign-in or another process); `--secret-header` values go into the headers of the MCP
//! requests, whose client follows no redirect.

use std::collections::BTreeMap;
use std::ffi::OsString;

use crate::cli::{self, HeaderSpec, SecretEnv};
use crate::secrets::resolve::{self, Place, Refusal, Stores, Use};
use crate::upstream::connect::ChildEnv;

/// The values of the secrets that the command line names, checked against their bindings;
/// without a reference no store opens.
pub(super) fn resolve(target: &cli::Target) -> Result<BTreeMap<String, String>, Refusal> {
    let cwd = std::env::current_dir().ok();
    let (uses, place) = match target {
        cli::Target::Command {
            command,
            secret_env,
            ..
        } => (
            secret_env
                .iter()
                .map(|SecretEnv { var, name }| Use::Env {
                    name: name.clone(),
                    var: var.clone(),
                })
                .collect::<Vec<_>>(),
            Place {
                command: Some(command.as_os_str()),
                origin: None,
                cwd,
            },
        ),
        cli::Target::Url(target) => (
            target
                .headers
                .iter()
                .flat_map(|spec| match spec {
                    HeaderSpec::Secret { name, template } => template
                        .names()
                        .into_iter()
                        .map(|secret| Use::Header {
                            name: secret.to_owned(),
                            header: name.clone(),
                        })
                        .collect(),
                    _ => Vec::new(),
                })
                .collect(),
            Place {
                command: None,
                origin: Some(target.url.origin().ascii_serialization()),
                cwd,
            },
        ),
    };
    if uses.is_empty() {
        return Ok(BTreeMap::new());
    }
    resolve::resolve(&uses, &place, &Stores::open())
}

/// The variables of `--secret-env` with their values, for the child alone.
pub(super) fn child_env(secret_env: &[SecretEnv], values: &BTreeMap<String, String>) -> ChildEnv {
    ChildEnv(
        secret_env
            .iter()
            .filter_map(|SecretEnv { var, name }| {
                values
                    .get(name)
                    .map(|value| (OsString::from(var), OsString::from(value)))
            })
            .collect(),
    )
}
