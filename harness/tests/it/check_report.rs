//! The reports of `harness check` for CI, with real servers: the fixture (through the bridge)
//! and the Python SDK 1.30 FastMCP server (`bridge/tests/older/python_server.py`, which
//! answers the Copilot harness's `server/discover` with -32602). The JUnit XML is read by a real
//! XML parser (roxmltree), the JSON is validated against docs/harness-report.schema.json, and
//! `--expect-fail`/`--allow` give the exit codes of docs/harness.md.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::bins::fixture;
use crate::check::{Out, check, check_cmd};
use harness::check::catalog::ALL;

/// The Python SDK 1.30 server's command, or `None` (skipped) when the venv is not installed.
fn python_server() -> Option<Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python: PathBuf = if cfg!(windows) {
        root.join("target/py-peers/Scripts/python.exe")
    } else {
        root.join("target/py-peers/bin/python")
    };
    if !python.is_file() {
        harness::skip::skip(
            "harness check_report: the Python SDK 1.30 is not installed at target/py-peers (run ci/install-peers.sh)",
        );
        return None;
    }
    let script = root.join("bridge/tests/older/python_server.py");
    Some(vec![
        python.to_string_lossy().into_owned(),
        script.to_string_lossy().into_owned(),
    ])
}

fn fixture_cmd() -> Vec<String> {
    vec![fixture().to_string_lossy().into_owned()]
}

/// The test cases of a JUnit document: (name, the type of its failure, skipped), after the
/// checks that every JUnit consumer relies on (one suite, counts equal to the cases).
fn junit_cases(out: &Out) -> Vec<(String, Option<String>, bool)> {
    let doc = roxmltree::Document::parse(&out.stdout)
        .unwrap_or_else(|e| panic!("not XML ({e}):\n{}\n{}", out.stdout, out.stderr));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), 1, "{}", out.stdout);
    let suite = suites[0];
    let cases: Vec<(String, Option<String>, bool)> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|c| {
            let failure = c
                .children()
                .find(|n| n.has_tag_name("failure"))
                .map(|f| f.attribute("type").unwrap_or("").to_string());
            let skipped = c.children().any(|n| n.has_tag_name("skipped"));
            (c.attribute("name").unwrap().to_string(), failure, skipped)
        })
        .collect();
    let count = |attr: &str| suite.attribute(attr).unwrap().parse::<usize>().unwrap();
    assert_eq!(count("tests"), cases.len());
    assert_eq!(
        count("failures"),
        cases.iter().filter(|c| c.1.is_some()).count()
    );
    assert_eq!(count("skipped"), cases.iter().filter(|c| c.2).count());
    let names: Vec<&str> = cases.iter().map(|c| c.0.as_str()).collect();
    let ids: Vec<&str> = ALL.iter().map(|c| c.id).collect();
    assert_eq!(
        names, ids,
        "one test case per check id, in the table's order"
    );
    cases
}

fn case<'a>(
    cases: &'a [(String, Option<String>, bool)],
    id: &str,
) -> &'a (String, Option<String>, bool) {
    cases.iter().find(|c| c.0 == id).unwrap()
}

fn failing(cases: &[(String, Option<String>, bool)]) -> Vec<&str> {
    cases
        .iter()
        .filter(|c| c.1.is_some())
        .map(|c| c.0.as_str())
        .collect()
}

fn schema_validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/harness-report.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
        .expect("the report schema compiles")
}

pub fn assert_valid(out: &Out) -> Value {
    let report = out.json();
    let errors: Vec<String> = schema_validator()
        .iter_errors(&report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{report:#}");
    report
}

#[test]
fn junit_of_the_fixture_is_valid_xml_with_one_passing_case_per_check() {
    let out = check_cmd(&["--format", "junit"], &fixture_cmd());
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let cases = junit_cases(&out);
    assert!(failing(&cases).is_empty(), "{}", out.stdout);
}

#[test]
fn junit_of_the_python_sdk_server_fails_the_copilot_discover_check() {
    let Some(cmd) = python_server() else { return };
    // The runtime that aborts on -32602 (1.0.102 sends initialize after it).
    let out = check_cmd(&["--format", "junit", "--copilot-runtime", "1.0.82"], &cmd);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let cases = junit_cases(&out);
    assert_eq!(
        failing(&cases),
        vec!["discover.invalid-params"],
        "{}",
        out.stdout
    );
    assert_eq!(
        case(&cases, "discover.invalid-params").1.as_deref(),
        Some("blocker")
    );
}

#[test]
fn an_expect_fail_of_a_present_problem_exits_0_and_of_an_absent_one_exits_3() {
    let Some(cmd) = python_server() else { return };
    let present = check_cmd(
        &[
            "--format",
            "junit",
            "--copilot-runtime",
            "1.0.82",
            "--expect-fail",
            "discover.invalid-params",
        ],
        &cmd,
    );
    assert_eq!(present.code, 0, "{}\n{}", present.stdout, present.stderr);
    assert!(
        failing(&junit_cases(&present)).is_empty(),
        "{}",
        present.stdout
    );
    // The fixture (through the bridge) answers discover: the expectation finds nothing.
    let absent = check_cmd(
        &[
            "--format",
            "junit",
            "--profile",
            "copilot",
            "--expect-fail",
            "discover.invalid-params",
        ],
        &fixture_cmd(),
    );
    assert_eq!(absent.code, 3, "{}\n{}", absent.stdout, absent.stderr);
    let cases = junit_cases(&absent);
    assert_eq!(
        case(&cases, "discover.invalid-params").1.as_deref(),
        Some("expected-failure-absent")
    );
}

#[test]
fn allowed_blockers_do_not_block_and_are_reported_as_allowed() {
    let out = check_cmd(
        &[
            "--json",
            "--via",
            "direct",
            "--profile",
            "local",
            "--allow",
            "schema.items",
        ],
        &fixture_cmd(),
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let r = assert_valid(&out);
    let items: Vec<&Value> = r["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["id"] == "schema.items")
        .collect();
    assert!(!items.is_empty());
    assert!(
        items
            .iter()
            .all(|p| p["status"] == "allowed" && p["severity"] == "blocker")
    );
    assert_eq!(r["allowed"], serde_json::json!(["schema.items"]));
    let junit = check_cmd(
        &[
            "--format",
            "junit",
            "--via",
            "direct",
            "--profile",
            "local",
            "--allow",
            "schema.items",
        ],
        &fixture_cmd(),
    );
    assert!(
        case(&junit_cases(&junit), "schema.items").2,
        "{}",
        junit.stdout
    );
}

#[test]
fn json_reports_validate_against_the_documented_schema() {
    let clean = assert_valid(&check_cmd(&["--json"], &fixture_cmd()));
    assert_eq!(clean["exit_code"], 0);
    assert_eq!(
        clean["discover"]["answer"], "error",
        "{:#}",
        clean["discover"]
    );
    let older = vec![
        fixture().to_string_lossy().into_owned(),
        "--revision".into(),
        "2025-11-25".into(),
    ];
    let r = assert_valid(&check_cmd(
        &["--format", "json", "--profile", "local"],
        &older,
    ));
    assert!(r["through_bridge"].is_object());
    if let Some(cmd) = python_server() {
        let r = assert_valid(&check_cmd(
            &[
                "--json",
                "--copilot-runtime",
                "1.0.82",
                "--expect-fail",
                "discover.invalid-params",
            ],
            &cmd,
        ));
        assert_eq!(r["exit_code"], 0);
        assert_eq!(
            r["expected_failures"],
            serde_json::json!([{"id": "discover.invalid-params", "present": true}])
        );
        let p = r["problems"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == "discover.invalid-params")
            .unwrap();
        assert_eq!(
            (&p["client"], &p["status"]),
            (&"copilot".into(), &"expected".into())
        );
    }
}

#[test]
fn unknown_ids_and_bad_expectation_files_are_usage_errors() {
    let f = fixture().to_string_lossy().into_owned();
    assert_eq!(check(&["--expect-fail", "no-such", "--", &f]).code, 2);
    assert_eq!(check(&["--allow", "no-such", "--", &f]).code, 2);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("expectations.txt");
    std::fs::write(&file, "# known\nallow schema.items\nexpect-fail\n").unwrap();
    let bad = check(&["--expectations", file.to_str().unwrap(), "--", &f]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains(":3:"), "{}", bad.stderr);
    std::fs::write(&file, "allow schema.items # the bridge repairs it\n").unwrap();
    let ok = check(&[
        "--expectations",
        file.to_str().unwrap(),
        "--via",
        "direct",
        "--profile",
        "local",
        "--",
        &f,
    ]);
    assert_eq!(ok.code, 0, "{}\n{}", ok.stdout, ok.stderr);
}
