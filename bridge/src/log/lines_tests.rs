use super::*;
use std::path::{Path, PathBuf};

fn docs_stderr_md() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/stderr.md")
}

/// With this variable set, the test of the tables writes them into docs/stderr.md instead of
/// comparing.
const WRITE: &str = "MCP_WRITE_DOCS";
const REGENERATE: &str = "MCP_WRITE_DOCS=1 cargo test -p mcp-bridge-vscode --lib log::lines";

/// `doc` with the table under each heading of [`SECTIONS`] made from the code; the text
/// between the tables stays. The headings of [`SECTIONS`] that `doc` lacks are returned.
fn with_tables(doc: &str) -> (String, Vec<&'static str>) {
    let mut out = Vec::new();
    let mut lines = doc.lines().peekable();
    let mut missing: Vec<&str> = SECTIONS.iter().map(|s| s.heading).collect();
    let mut section: Option<&Section> = None;
    while let Some(line) = lines.next() {
        if let Some(heading) = line.strip_prefix("## ") {
            section = SECTIONS.iter().find(|s| s.heading == heading);
            missing.retain(|h| *h != heading);
        }
        if line.starts_with('|')
            && let Some(found) = section.take()
        {
            while lines.peek().is_some_and(|l| l.starts_with('|')) {
                lines.next();
            }
            out.extend(found.table());
            continue;
        }
        out.push(line.to_owned());
    }
    let mut text = out.join("\n");
    if doc.ends_with('\n') {
        text.push('\n');
    }
    (text, missing)
}

/// The lines that differ between `old` and `new` (a longest common subsequence), `-` for
/// `old` and `+` for `new`, each with its line number.
fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let mut common = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            common[i][j] = if a[i] == b[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || common[i][j + 1] >= common[i + 1][j]) {
            out.push_str(&format!("+{:4} {}\n", j + 1, b[j]));
            j += 1;
        } else {
            out.push_str(&format!("-{:4} {}\n", i + 1, a[i]));
            i += 1;
        }
    }
    out
}

/// docs/stderr.md's tables are the tables of [`SECTIONS`], row for row (with [`WRITE`] set,
/// they are written there).
#[test]
fn r7_docs_stderr_md_has_the_tables_of_the_code() {
    let path = docs_stderr_md();
    let doc = std::fs::read_to_string(&path).expect("docs/stderr.md is readable");
    let (made, missing) = with_tables(&doc);
    assert!(
        missing.is_empty(),
        "docs/stderr.md has no heading `## <heading>` for the sections {missing:?} of bridge/src/log/lines.rs"
    );
    if std::env::var_os(WRITE).is_some() {
        std::fs::write(&path, made).expect("docs/stderr.md is writable");
        return;
    }
    assert!(
        made == doc,
        "the tables of docs/stderr.md (-) differ from bridge/src/log/lines.rs (+):\n{}\n\
         Change the entry in bridge/src/log/lines.rs, then write the tables of the docs with\n  {REGENERATE}",
        diff(&doc, &made)
    );
}

#[test]
fn the_table_has_each_line_once() {
    let mut seen = std::collections::HashSet::new();
    for section in SECTIONS {
        for line in section.lines {
            assert!(
                seen.insert(line.full()),
                "{} is twice in the table",
                line.full()
            );
            assert!(
                !line.when.contains('\n') && !line.when.contains(" | "),
                "{}",
                line.text
            );
        }
    }
}

/// Every `.rs` file under bridge/src but this table and its tests, with its path.
fn sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, found: &mut Vec<(PathBuf, String)>) {
        for entry in std::fs::read_dir(dir)
            .expect("bridge/src is readable")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !path.ends_with("log/lines.rs")
                && !path.ends_with("log/lines_tests.rs")
            {
                let text = std::fs::read_to_string(&path).expect("a source file is readable");
                found.push((path, text));
            }
        }
    }
    let mut found = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut found,
    );
    assert!(found.len() > 100, "found only {} sources", found.len());
    found
}

/// The arguments of a call whose `(` ends `text[..start]`, split at the commas outside
/// brackets and string literals.
fn arguments(text: &str, start: usize) -> Vec<&str> {
    let bytes = text.as_bytes();
    let (mut depth, mut in_string, mut i, mut from) = (1usize, false, start, start);
    let mut args = Vec::new();
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match c {
                b'"' => in_string = true,
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        args.push(text[from..i].trim());
                        break;
                    }
                }
                b',' if depth == 1 => {
                    args.push(text[from..i].trim());
                    from = i + 1;
                }
                _ => {}
            }
        }
        i += 1;
    }
    args.retain(|a| !a.is_empty());
    args
}

/// The value of the first string literal of `arg` when `arg` is a literal or
/// `format!("…", …)` (with or without `&`); None for any other expression.
fn literal(arg: &str) -> Option<String> {
    let arg = arg.trim_start_matches('&');
    let arg = arg
        .strip_prefix("format!(")
        .map(str::trim_start)
        .unwrap_or(arg);
    let body = arg.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                // A line continuation: the break and the indentation that follows go.
                '\n' => {
                    let rest = chars.as_str().trim_start();
                    chars = rest.chars();
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// The text before the first placeholder (`<…>`) or ellipsis of an entry.
fn fixed_start(text: &str) -> &str {
    let end = text.find(['<', '…']).unwrap_or(text.len());
    &text[..end]
}

/// True when `text` is the start of a line that the entry text `pattern` describes: a
/// placeholder (`<…>`) stands for any text, and an ellipsis (`…`) for any rest. `text` is the
/// fixed start of a call's literal (cut at its first `{`), so it never ends inside a
/// placeholder that fixed text of the pattern follows.
fn starts(pattern: &str, text: &str) -> bool {
    if text.is_empty() || pattern.starts_with('…') {
        return true;
    }
    if let Some(rest) = pattern.strip_prefix('<')
        && let Some((_, after)) = rest.split_once('>')
    {
        // The placeholder takes some text (all of it when nothing follows it), and the
        // pattern goes on with the rest.
        return after.is_empty()
            || text
                .char_indices()
                .any(|(i, _)| starts(after, &text[i..]) && !text[i..].is_empty());
    }
    match (pattern.chars().next(), text.chars().next()) {
        (Some(p), Some(t)) if p == t => starts(&pattern[p.len_utf8()..], &text[t.len_utf8()..]),
        _ => false,
    }
}

fn scope_of(arg: &str) -> Option<Scope> {
    match arg {
        "Scope::Bridge" => Some(Scope::Bridge),
        "Scope::Vscode" => Some(Scope::Vscode),
        "Scope::McpStdio" => Some(Scope::McpStdio),
        "Scope::McpRouter" => Some(Scope::McpRouter),
        _ => None,
    }
}

fn level_of(arg: &str) -> Option<Level> {
    match arg {
        "Level::Err" => Some(Level::Err),
        "Level::Warn" => Some(Level::Warn),
        "Level::Info" => Some(Level::Info),
        "Level::Debug" => Some(Level::Debug),
        _ => None,
    }
}

/// One literal text of a call site: where, scope, level (None when a variable gives it) and
/// the fixed text before the first `{`.
struct CallSite {
    place: String,
    scope: Scope,
    level: Option<Level>,
    fixed: String,
}

fn call_sites() -> Vec<CallSite> {
    let mut found = Vec::new();
    for (path, text) in sources() {
        for (call, scope) in [
            ("log::bridge(", Some(Scope::Bridge)),
            ("log::vscode(", Some(Scope::Vscode)),
            ("log::write(", None),
        ] {
            for (at, _) in text.match_indices(call) {
                let args = arguments(&text, at + call.len());
                let (scope, rest) = match scope {
                    Some(scope) => (Some(scope), &args[..]),
                    None => (
                        args.first().and_then(|a| scope_of(a)),
                        args.get(1..).unwrap_or(&[]),
                    ),
                };
                let (Some(scope), [level, message, ..]) = (scope, rest) else {
                    continue;
                };
                let Some(message) = literal(message) else {
                    continue;
                };
                let fixed = message.split('{').next().unwrap_or_default().to_owned();
                let line = text[..at].lines().count();
                found.push(CallSite {
                    place: format!("{}:{line}", path.display()),
                    scope,
                    level: level_of(level),
                    fixed,
                });
            }
        }
    }
    found
}

/// Every literal text that the code passes to `log::bridge`, `log::vscode` or `log::write`
/// (its fixed text before the first `{`) starts an entry of the same scope and level.
#[test]
fn r7_every_literal_line_of_the_code_is_in_the_table() {
    let sites = call_sites();
    assert!(sites.len() > 50, "found only {} call sites", sites.len());
    let mut absent = Vec::new();
    for site in &sites {
        let listed = SECTIONS.iter().flat_map(|s| s.lines).any(|line| {
            let Head::Tagged(scope, level) = line.head else {
                return false;
            };
            scope == site.scope
                && site.level.is_none_or(|l| l == level)
                && starts(line.text, &site.fixed)
        });
        if !listed {
            absent.push(format!(
                "{} ({}: {:?}): {:?}",
                site.place,
                site.scope.target(),
                site.level,
                site.fixed
            ));
        }
    }
    assert!(
        absent.is_empty(),
        "lines of the code without an entry in bridge/src/log/lines.rs (then run {REGENERATE}):\n{}",
        absent.join("\n")
    );
}

/// Every entry's fixed start (before its first placeholder) is in some source file of the
/// bridge, where `\"` reads as `"`; or it starts with the literal text of a call whose
/// formatted value writes the rest (`the upstream server {exit}`, and `exited with code `
/// elsewhere), and that rest is in some source file.
#[test]
fn r7_every_entry_of_the_table_is_in_the_code() {
    let sources: Vec<String> = sources()
        .into_iter()
        .map(|(_, text)| text.replace("\\\"", "\""))
        .collect();
    let calls: Vec<String> = call_sites()
        .into_iter()
        .map(|site| site.fixed)
        .filter(|fixed| !fixed.is_empty())
        .collect();
    let found = |text: &str| sources.iter().any(|source| source.contains(text));
    let mut absent = Vec::new();
    for line in SECTIONS.iter().flat_map(|s| s.lines) {
        let start = fixed_start(line.text);
        let composed = calls.iter().any(|call| {
            start
                .strip_prefix(call.as_str())
                .is_some_and(|rest| !rest.is_empty() && found(rest))
        });
        if !found(start) && !composed {
            absent.push(line.full());
        }
    }
    assert!(
        absent.is_empty(),
        "entries of bridge/src/log/lines.rs whose fixed start is in no file of bridge/src:\n{}",
        absent.join("\n")
    );
}

#[test]
fn the_readers_of_the_tests_take_literals_and_format_calls() {
    let code = r#"log::bridge(Level::Warn, &format!("request {} ({m}): x", id)); log::write(Scope::McpStdio, Level::Warn, "a \"b\" \
        c");"#;
    let at = code.find('(').unwrap() + 1;
    let args = arguments(code, at);
    assert_eq!(
        args,
        ["Level::Warn", r#"&format!("request {} ({m}): x", id)"#]
    );
    assert_eq!(literal(args[1]).unwrap(), "request {} ({m}): x");
    let at = code.find("write(").unwrap() + "write(".len();
    let args = arguments(code, at);
    assert_eq!(literal(args[2]).unwrap(), "a \"b\" c");
    assert_eq!(literal("&e.line"), None);
    assert_eq!(
        fixed_start("the upstream server <x> y"),
        "the upstream server "
    );
    assert!(diff("a\nb\nc", "a\nc\nd").contains("-   2 b"));
    assert!(starts("dropped a line: <cause>", "dropped a line: no id"));
    assert!(starts("request <id> (<method>): x", "request "));
    assert!(starts("a <n> b. …", "a 3 b. More"));
    assert!(!starts("a <n> b", "a 3 c"));
}
