//! `docs/rules.md` is the index of the rule ids: every id that the code, the tests and the
//! transcript names cite (`R1`, `C2`, `O7`, `Q3`, `A16`, `B28`, or a name such as `r8_…`) has
//! its entry there, and every file that an entry names exists. A comment that cites a new id,
//! or a file that moves, fails here until `docs/rules.md` follows.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const RULES: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/rules.md"));

/// The folders of the workspace whose sources cite rule ids.
const CITING: [&str; 5] = [
    "bridge/src",
    "bridge/tests",
    "harness/src",
    "fixture-server/src",
    "transcripts",
];

/// A rule id: one of the letters of the rule families and one or two digits.
fn id_of(token: &str) -> Option<String> {
    let first = token.chars().next()?;
    let digits: String = token[1..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let rest = &token[1 + digits.len()..];
    let family = matches!(
        first.to_ascii_uppercase(),
        'R' | 'C' | 'O' | 'Q' | 'L' | 'A' | 'B'
    );
    if !family || digits.is_empty() || digits.len() > 2 {
        return None;
    }
    // `R4` in prose, `r4_…` in the name of a test or a function.
    let cited = (first.is_ascii_uppercase() && rest.is_empty())
        || (first.is_ascii_lowercase() && rest.starts_with('_'));
    cited.then(|| format!("{}{digits}", first.to_ascii_uppercase()))
}

/// The rule ids that `text` cites.
fn cited(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter_map(id_of)
        .collect()
}

/// The ids that have an entry: a heading `### R1 …` or a table row `| A1 | …`.
fn entries(doc: &str) -> BTreeSet<String> {
    doc.lines()
        .filter_map(|line| {
            let head = line
                .strip_prefix("### ")
                .or_else(|| line.strip_prefix("| "))?;
            let word = head.split([' ', '|']).next()?;
            id_of(word)
        })
        .collect()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the bridge crate is in the workspace")
        .to_path_buf()
}

/// Every `.rs`, `.jsonl` and `.mjs` file under `dir`, with its path relative to the workspace.
fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in read.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if !path.ends_with("node_modules") {
                sources(&path, found);
            }
        } else if path
            .extension()
            .is_some_and(|e| e == "rs" || e == "jsonl" || e == "mjs")
        {
            found.push(path);
        }
    }
}

#[test]
fn every_cited_rule_id_has_its_entry_in_docs_rules_md() {
    let root = workspace();
    let mut files = Vec::new();
    for dir in CITING {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "found only {} sources", files.len());
    let known = entries(RULES);
    let mut missing = Vec::new();
    for file in &files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        // A transcript cites its ids in its name; its frames hold no rule ids.
        let text = if name.ends_with(".jsonl") {
            name.to_owned()
        } else {
            std::fs::read_to_string(file).expect("a source file is readable")
        };
        for id in cited(&text).difference(&known) {
            let rel = file.strip_prefix(&root).unwrap_or(file);
            missing.push(format!("{id} (cited in {})", rel.display()));
        }
    }
    assert!(
        missing.is_empty(),
        "rule ids without an entry in docs/rules.md: {missing:#?}"
    );
}

#[test]
fn every_file_that_docs_rules_md_names_exists() {
    let root = workspace();
    let mut absent = Vec::new();
    for quoted in RULES.split('`').skip(1).step_by(2) {
        if quoted.contains([' ', ':']) || quoted.starts_with('/') {
            continue;
        }
        let named = CITING
            .iter()
            .chain(&["ci", "docs", "fixture-server/tests"])
            .any(|dir| quoted.starts_with(&format!("{dir}/")));
        // Code paths without a folder of the workspace are under bridge/src.
        let in_src = quoted.ends_with(".rs") || quoted.ends_with('/');
        let quoted = match (named, in_src) {
            (true, _) => quoted.to_owned(),
            (false, true) => format!("bridge/src/{quoted}"),
            (false, false) => continue,
        };
        let quoted = quoted.as_str();
        let exists = match quoted.strip_suffix('*') {
            // `transcripts/m3/A16-*`: some file of that folder has the prefix.
            Some(prefix) => {
                let (dir, start) = prefix.rsplit_once('/').unwrap_or(("", prefix));
                std::fs::read_dir(root.join(dir)).is_ok_and(|read| {
                    read.flatten()
                        .any(|e| e.file_name().to_string_lossy().starts_with(start))
                })
            }
            None => root.join(quoted).exists(),
        };
        if !exists {
            absent.push(quoted.to_owned());
        }
    }
    assert!(
        absent.is_empty(),
        "docs/rules.md names files that do not exist: {absent:#?}"
    );
}

#[test]
fn the_id_reader_takes_ids_and_names_and_leaves_other_words() {
    let text = "R4, O1-A10 and r8_rounds; M1, R, R100, Rx, r8x, 0xA1, B28.";
    let ids: Vec<String> = cited(text).into_iter().collect();
    assert_eq!(ids, ["A10", "B28", "O1", "R4", "R8"]);
}
