//! `--revision <revision>`: which revision the fixture serves, `2026-07-28` (the default) or
//! `2025-11-25` (the stateful older server of `src/older/`, docs/fixture.md).
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
}

/// The value parser of `--revision`; its error is the whole cause on stderr.
pub fn parse(text: &str) -> Result<Revision, String> {
    match text {
        "2026-07-28" => Ok(Revision::Modern),
        "2025-11-25" => Ok(Revision::Older),
        other => Err(format!(
            "--revision needs 2026-07-28 or 2025-11-25, not '{other}'"
        )),
    }
}

/// The option that the older server does not have: the embedded bridge (a 2026-07-28 path).
/// `--conformance` serves both: the older server asks its forms and sampling as
/// server-initiated requests (`crate::older::tools`).
pub fn check(revision: Revision, embedded: bool) -> Result<(), String> {
    if revision == Revision::Older && embedded {
        return Err("the option --embedded needs --revision 2026-07-28".into());
    }
    Ok(())
}
