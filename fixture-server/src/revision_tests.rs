//! The unit tests of `--revision` as an option of the clap command line (revision.rs, cli.rs).

use super::*;

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn served(revision: Revision) -> Result<Command, String> {
    Ok(Command::Serve(Options {
        revision,
        many_tools: 3,
        ..Options::default()
    }))
}

#[test]
fn reads_the_revision_in_both_forms_beside_the_other_options() {
    let older = args(&["--revision", "2025-11-25", "--many-tools", "3"]);
    assert_eq!(parse(&older), served(Revision::Older));
    let modern = args(&["--many-tools", "3", "--revision=2026-07-28"]);
    assert_eq!(parse(&modern), served(Revision::Modern));
    assert_eq!(
        parse(&args(&["--many-tools", "3"])),
        served(Revision::Modern)
    );
}

#[test]
fn refuses_an_unknown_or_missing_or_repeated_revision() {
    assert_eq!(
        parse(&args(&["--revision", "2024-11-05"])),
        Err("--revision needs 2026-07-28, 2025-11-25 or dual, not '2024-11-05'".into())
    );
    assert_eq!(
        parse(&args(&["--revision"])),
        Err("the option --revision needs a value".into())
    );
    assert_eq!(
        parse(&args(&["--revision=2025-11-25", "--revision=2025-11-25"])),
        Err("the option --revision is given twice".into())
    );
}

#[test]
fn the_older_revision_refuses_the_embedded_bridge_and_takes_the_conformance_tools() {
    assert_eq!(
        parse(&args(&["--revision", "2025-11-25", "--embedded"])),
        Err("the option --embedded needs --revision 2026-07-28".into()),
    );
    assert!(parse(&args(&["--revision", "2026-07-28", "--embedded"])).is_ok());
    assert!(parse(&args(&["--revision", "2025-11-25", "--conformance"])).is_ok());
}

#[test]
fn dual_serves_stdio_only() {
    assert_eq!(
        parse(&args(&["--revision", "dual"])),
        Ok(Command::Serve(Options {
            revision: Revision::Dual,
            ..Options::default()
        }))
    );
    assert_eq!(
        parse(&args(&["--revision", "dual", "--listen", "127.0.0.1:0"])),
        Err("--revision dual serves stdio only, not --listen".into()),
    );
    assert_eq!(
        parse(&args(&["--revision", "dual", "--embedded"])),
        Err("the option --embedded needs --revision 2026-07-28".into()),
    );
}
