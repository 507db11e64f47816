//! `docs/options.md` is true: its table of options equals the command line that clap parses
//! (`args::Raw`), the list of options of the code (`OPTIONS`, `URL_OPTIONS`) and the defaults
//! that `--help` prints (`USAGE`). A new option, a renamed one or a changed default fails here
//! until the table says the same.

use std::collections::BTreeSet;

use clap::CommandFactory;

use super::args::Raw;
use super::{COMMAND_OPTIONS, OPTIONS, URL_OPTIONS, USAGE};

const DOC: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/options.md"));

/// One row of the table: the option (`--name`), its form (`both` or `URL`) and its default.
struct Row {
    option: String,
    form: String,
    default: String,
}

/// The rows of the section "The options" of `doc`.
fn rows(doc: &str) -> Vec<Row> {
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("The options"))
        .expect("docs/options.md has the section \"The options\"");
    section
        .lines()
        .filter(|line| line.starts_with("| `-"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            assert_eq!(cells.len(), 4, "a row of four cells: {line}");
            let option = cells[0].trim_matches('`');
            let option = option.split([' ', '=']).next().unwrap_or_default();
            Row {
                option: option.to_owned(),
                form: cells[1].to_owned(),
                default: cells[3].to_owned(),
            }
        })
        .collect()
}

/// The text of a default, compared without backticks, case, spacing or a final period.
fn normal(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .join(" ")
        .replace('`', "")
        .trim_end_matches('.')
        .to_lowercase()
}

/// The options that `--help` lists, with the text after `Default:` where it gives one.
fn usage_entries() -> Vec<(String, Option<String>)> {
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in USAGE.lines() {
        if let Some(rest) = line.strip_prefix("  --") {
            let name = rest.split([' ', '=']).next().unwrap_or_default();
            entries.push((format!("--{name}"), line.to_owned()));
        } else if line.starts_with("      ") {
            if let Some((_, text)) = entries.last_mut() {
                text.push(' ');
                text.push_str(line);
            }
        } else if !line.starts_with("  ") {
            entries.push((String::new(), String::new()));
        }
    }
    entries
        .into_iter()
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, text)| {
            let default = text.split_once("Default: ").map(|(_, d)| normal(d));
            (name, default)
        })
        .collect()
}

#[test]
fn the_options_table_has_every_option_that_the_command_line_parses_and_no_other() {
    let command = Raw::command();
    let parsed: BTreeSet<String> = command
        .get_arguments()
        .filter_map(|arg| arg.get_long().map(|long| format!("--{long}")))
        .collect();
    let shorts: Vec<char> = command
        .get_arguments()
        .filter_map(|arg| arg.get_short())
        .collect();
    let rows = rows(DOC);
    let documented: BTreeSet<String> = rows.iter().map(|r| r.option.clone()).collect();
    assert_eq!(rows.len(), documented.len(), "an option has two rows");
    assert_eq!(documented, parsed, "docs/options.md against clap's options");
    let listed: BTreeSet<String> = OPTIONS.iter().map(|o| (*o).to_owned()).collect();
    assert_eq!(documented, listed, "docs/options.md against cli::OPTIONS");
    assert!(
        shorts.is_empty(),
        "short forms {shorts:?}: add them to docs/options.md"
    );
}

#[test]
fn the_options_table_gives_the_form_of_each_option() {
    for row in rows(DOC) {
        let expected = if URL_OPTIONS.contains(&row.option.as_str()) {
            "URL"
        } else if COMMAND_OPTIONS.contains(&row.option.as_str()) {
            "command"
        } else {
            "both"
        };
        assert_eq!(row.form, expected, "the form of {}", row.option);
    }
}

#[test]
fn the_options_table_and_help_list_the_same_options_and_defaults() {
    let usage = usage_entries();
    let helped: BTreeSet<&str> = usage.iter().map(|(o, _)| o.as_str()).collect();
    let rows = rows(DOC);
    let documented: BTreeSet<&str> = rows.iter().map(|r| r.option.as_str()).collect();
    assert_eq!(documented, helped, "docs/options.md against --help");
    for row in &rows {
        let (_, default) = usage
            .iter()
            .find(|(o, _)| *o == row.option)
            .expect("listed by --help");
        match default {
            Some(default) => assert_eq!(
                normal(&row.default),
                *default,
                "the default of {} in docs/options.md and in --help",
                row.option
            ),
            None => assert!(
                row.default.is_empty() || row.default.starts_with("none"),
                "{} has no default in --help, but docs/options.md gives {:?}",
                row.option,
                row.default
            ),
        }
    }
}
