//! The integration tests of `mcp-bridge-vscode`: one test binary, one module per behaviour,
//! on the real binaries (`mcp-bridge-vscode`, `bridge-fixture-server`) with real pipes,
//! processes, TLS and peers. The shared helpers are in [`support`].
//!
//! The modules share one process: no test sets a variable of this process (each child gets its
//! own environment). What needs the inside of the crate (the bridge's `serve` with its hooks
//! and clock, the token stores) is a unit test of its module in `bridge/src`.

mod support;

mod chromium_sign_in;
mod cli;
mod cli_url_form;
mod discover_refusals;
mod embed;
mod fault_contract;
mod fault_matrix;
mod fault_matrix_url;
mod initialize;
mod input_rounds;
mod interop;
mod interop_http;
mod keychain;
mod list_changes;
mod load_faults;
mod localhost_resolved;
mod logout_index;
mod older_hostile;
mod older_sign_in;
mod older_upstream;
mod older_upstream_faults;
mod older_upstream_url;
mod refresh_rotation;
mod registered_auth_method;
mod secret_sweep;
mod secrets;
mod sign_in;
mod sign_in_at_start;
mod sign_in_checked_answers;
mod sign_in_forged_redirects;
mod sign_in_issuer_bound;
mod sign_in_plain_http_local;
mod sign_in_proxy_per_request;
mod sign_in_tenants;
mod slow_start;
mod stdio_form;
mod step_up_scope_union;
mod stop;
mod stores;
mod stores_sign_in;
mod tokens_stay_off_stdout;
mod url_form;
mod windows_keychain_parts;
mod windows_secrets;
mod windows_sign_in;
mod windows_stop;
