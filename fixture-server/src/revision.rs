//! `--revision <revision>`: which revision the fixture serves, `2026-07-28` (the default),
//! `2025-11-25` (the stateful older server of `src/older/`, docs/fixture.md), or `dual` (both,
//! the connection locked to the era of its first request, as the SDKs of 2026-07-28 lock a
//! stdio connection: `src/dual.rs`).
//!
//! The option is the field `revision` of the clap options (`cli.rs`); this file has its
//! value ([`Revision`], [`parse`]) and the options that the older revision excludes
//! ([`check`]), which `cli::parse` applies after the rest of the command line.
/// The revision of the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Revision {
    /// 2026-07-28: stateless, `server/discover`, input rounds, listen streams.
    #[default]
    Modern,
    /// 2025-11-25: `initialize`, a session, server-initiated requests.
    Older,
    /// Both, on stdio: the first request locks the connection to its era (`crate::dual`).
    Dual,
}

/// The value parser of `--revision`; its error is the whole cause on stderr.
pub fn parse(text: &str) -> Result<Revision, String> {
    match text {
        "2026-07-28" => Ok(Revision::Modern),
        "2025-11-25" => Ok(Revision::Older),
        "dual" => Ok(Revision::Dual),
        other => Err(format!(
            "--revision needs 2026-07-28, 2025-11-25 or dual, not '{other}'"
        )),
    }
}

/// The option that the older server does not have: the embedded bridge (a 2026-07-28 path).
/// `--conformance` serves both: the older server asks its forms and sampling as
/// server-initiated requests (`crate::older::tools`).
/// `dual` is a mode of the stdio transport (the lock of one connection), so it excludes the
/// HTTP mode and the embedded bridge.
pub fn check(revision: Revision, embedded: bool, listen: bool) -> Result<(), String> {
    if revision != Revision::Modern && embedded {
        return Err("the option --embedded needs --revision 2026-07-28".into());
    }
    if revision == Revision::Dual && listen {
        return Err("--revision dual serves stdio only, not --listen".into());
    }
    Ok(())
}
