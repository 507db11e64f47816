//! The table of check ids in docs/harness.md ("What it reports") is the catalog of the code
//! (harness/src/check/catalog.rs), row for row: the id, the severity, the client and the text.
//! Server authors name these ids in `--expect-fail` and `--allow`; a check that the code
//! reports and the table lacks, or the other way round, fails here.

use std::path::Path;

use harness::check::catalog::ALL;

/// The header of the table.
const HEADER: &str = "| id | severity | client | what VS Code or the Copilot harness does |";

fn doc_rows() -> Vec<[String; 4]> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/harness.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines().skip_while(|l| l.trim() != HEADER);
    assert!(
        lines.next().is_some(),
        "no table '{HEADER}' in {}",
        path.display()
    );
    lines
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<String> = l
                .trim()
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect();
            assert_eq!(cells.len(), 4, "a row of four cells: {l}");
            [
                cells[0].trim_matches('`').to_string(),
                cells[1].clone(),
                cells[2].clone(),
                cells[3].clone(),
            ]
        })
        .collect()
}

#[test]
fn the_table_of_check_ids_in_the_docs_is_the_catalog_of_the_code() {
    let code: Vec<[String; 4]> = ALL
        .iter()
        .map(|c| {
            [
                c.id.to_string(),
                c.severity.to_string(),
                c.client.name().to_string(),
                c.what.to_string(),
            ]
        })
        .collect();
    let docs = doc_rows();
    if docs != code {
        let table: Vec<String> = code
            .iter()
            .map(|[id, sev, client, what]| format!("| `{id}` | {sev} | {client} | {what} |"))
            .collect();
        panic!(
            "docs/harness.md differs from check/catalog.rs; the table of the code:\n{HEADER}\n| --- | --- | --- | --- |\n{}",
            table.join("\n")
        );
    }
}
