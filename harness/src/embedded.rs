//! M5: which transcripts the `--embedded` run replays against `bridge-fixture-server --embedded`.

/// M5: why a transcript does not run against the embedded bridge: only transcripts of the
/// fixture without options of the bridge can (the embedded bridge has none, and a scripted or
/// other upstream is not a server in the same process), unless the transcript says why the
/// embedded path differs.
pub fn embedded_skip(setup: &crate::format::Setup) -> Option<String> {
    if let Some(why) = &setup.embedded {
        return Some(format!("the embedded path differs: {why}"));
    }
    if !matches!(setup.upstream, crate::format::Upstream::Fixture(_)) {
        return Some("not the fixture".into());
    }
    if !setup.args.is_empty() {
        return Some("options of the bridge".into());
    }
    // L1: the embedded server speaks revision 2026-07-28; an older fixture runs only behind
    // the executable.
    if matches!(&setup.upstream, crate::format::Upstream::Fixture(args) if args.iter().any(|a| a == "--revision"))
    {
        return Some("an older upstream (the embedded server speaks 2026-07-28)".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::embedded_skip;
    use crate::format::{Setup, Upstream};

    #[test]
    fn m5_only_fixture_transcripts_without_bridge_options_run_embedded() {
        assert_eq!(embedded_skip(&Setup::default()), None);
        let with_args = Setup {
            args: vec!["--log-level".into(), "debug".into()],
            ..Setup::default()
        };
        assert_eq!(
            embedded_skip(&with_args).as_deref(),
            Some("options of the bridge")
        );
        let scripted = Setup {
            upstream: Upstream::None,
            ..Setup::default()
        };
        assert_eq!(embedded_skip(&scripted).as_deref(), Some("not the fixture"));
        let older = Setup {
            upstream: Upstream::Fixture(vec!["--revision".into(), "2025-11-25".into()]),
            ..Setup::default()
        };
        assert_eq!(
            embedded_skip(&older).as_deref(),
            Some("an older upstream (the embedded server speaks 2026-07-28)")
        );
        let differs = Setup {
            embedded: Some("why".into()),
            ..Setup::default()
        };
        assert_eq!(
            embedded_skip(&differs).as_deref(),
            Some("the embedded path differs: why")
        );
    }
}
