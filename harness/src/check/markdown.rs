//! The report as Markdown for a CI job's summary (`--summary FILE`, appended; the Action
//! passes `$GITHUB_STEP_SUMMARY`): the verdict of each client, the Copilot runtime's starts,
//! and the problems, as tables. Every text of the server (names, messages) is escaped, so
//! that it cannot end a cell, start markup or inject HTML, and the whole is capped: a job
//! summary has a size limit, and a server with thousands of problems must not fill it.
use std::fmt::Write as _;

use super::render::{status_name, whose};
use super::{Report, Severity};

/// The longest cell, in characters.
const CELL_MAX: usize = 300;
/// The most problem rows; the rest is counted in one line.
const ROWS_MAX: usize = 100;
/// The largest summary, in bytes (GitHub's limit for one step is 1 MiB).
pub const SUMMARY_MAX: usize = 64 * 1024;

/// Text for one table cell: one line, Markdown and HTML characters escaped, at most
/// [`CELL_MAX`] characters.
pub fn cell(text: &str) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == CELL_MAX {
            out.push('…');
            break;
        }
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '~' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// The Markdown summary of a report, at most [`SUMMARY_MAX`] bytes.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### harness check: {}\n", cell(&report.target));
    let verdict = match report.exit_code() {
        1 => "something blocks (exit 1)",
        3 => "nothing blocks, but an expected failure is absent (exit 3)",
        _ => "nothing blocks (exit 0)",
    };
    let _ = writeln!(out, "{verdict}; path: {}\n", cell(&report.path_reason));
    if !report.verdicts.is_empty() {
        let _ = writeln!(out, "| client | as it is | through the bridge |");
        let _ = writeln!(out, "| --- | --- | --- |");
        for v in &report.verdicts {
            let as_it_is = match &v.why {
                Some(why) => format!("{}: {why}", v.verdict),
                None => v.verdict.to_string(),
            };
            let through = v.through_bridge.as_deref().unwrap_or("not run");
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                v.client,
                cell(&as_it_is),
                cell(through)
            );
        }
        let _ = writeln!(out);
    }
    if !report.starts.is_empty() {
        let _ = writeln!(
            out,
            "| Copilot runtime {} start | what it saw |",
            report.runtime.version.name()
        );
        let _ = writeln!(out, "| --- | --- |");
        for s in &report.starts {
            let line = super::starts::line(s, &report.runtime);
            let _ = writeln!(out, "| {} | {} |", s.n, cell(&line));
        }
        let _ = writeln!(out);
    }
    let mut problems: Vec<_> = report
        .problems
        .iter()
        .chain(report.tools.iter().flat_map(|t| t.problems.iter()))
        .collect();
    problems.sort_by_key(|p| p.severity != Severity::Blocker);
    if !problems.is_empty() {
        let _ = writeln!(out, "| status | id | problem |");
        let _ = writeln!(out, "| --- | --- | --- |");
        for p in problems.iter().take(ROWS_MAX) {
            let text = format!("{}{}", whose(p), p.message);
            let _ = writeln!(
                out,
                "| {} | `{}` | {} |",
                status_name(p.status),
                p.check.id,
                cell(&text)
            );
        }
        if problems.len() > ROWS_MAX {
            let _ = writeln!(
                out,
                "\n{} more problems: the report file has them all.",
                problems.len() - ROWS_MAX
            );
        }
    }
    cap(out)
}

/// Cuts the summary at a line within [`SUMMARY_MAX`] bytes, saying so.
fn cap(text: String) -> String {
    if text.len() <= SUMMARY_MAX {
        return text;
    }
    let note = "\n(cut: the summary is capped; the report file has everything)\n";
    let mut end = SUMMARY_MAX - note.len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let end = text[..end].rfind('\n').unwrap_or(end);
    format!("{}{note}", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_escapes_markup_and_html_and_stays_one_capped_line() {
        assert_eq!(
            cell("a|b<script>`x`*_[l](u)\nz"),
            "a\\|b&lt;script&gt;\\`x\\`\\*\\_\\[l\\](u) z"
        );
        let long = "x".repeat(CELL_MAX + 10);
        assert_eq!(cell(&long).chars().count(), CELL_MAX + 1);
    }

    #[test]
    fn a_long_summary_is_cut_at_a_line_within_the_cap() {
        let text = "| a | b |\n".repeat(SUMMARY_MAX);
        let capped = cap(text);
        assert!(capped.len() <= SUMMARY_MAX, "{}", capped.len());
        assert!(capped.ends_with("the report file has everything)\n"));
        assert!(capped.contains("| a | b |\n(cut"));
    }
}
