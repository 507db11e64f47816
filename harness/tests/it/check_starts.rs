//! `harness check` as the Copilot runtime of today starts a server (runtime 1.0.102, its
//! window and its budget scaled down): the fixture that locks its connection at
//! `server/discover` (`--revision dual`) and the fixture that starts slowly
//! (`--start-delay`), each directly and through the bridge (docs/harness.md, "Which client
//! needs the bridge").
use serde_json::{Value, json};

use crate::bins::fixture;
use crate::check::check;
use crate::check_report::assert_valid;

/// The runtime's discover window of these tests, in milliseconds; each test gives its
/// `initialize` budget. The fixture's start delays are a second or more away from both, so
/// that the outcome does not depend on how fast the machine starts a process.
const WINDOW_MS: &str = "300";

fn check_copilot(budget_ms: &str, fixture_args: &[&str]) -> (i32, Value) {
    let fixture = fixture();
    let fixture = fixture.to_string_lossy();
    let mut command = vec![fixture.as_ref()];
    command.extend_from_slice(fixture_args);
    check_copilot_command(budget_ms, &command)
}

/// `harness check` of `command` with the Copilot profile, its window scaled down.
fn check_copilot_command(budget_ms: &str, command: &[&str]) -> (i32, Value) {
    let mut args = vec![
        "--json",
        "--profile",
        "copilot",
        "--copilot-window-ms",
        WINDOW_MS,
        "--initialize-budget-ms",
        budget_ms,
        "--",
    ];
    args.extend_from_slice(command);
    let out = check(&args);
    let report = assert_valid(&out);
    (out.code, report)
}

fn copilot_verdict(report: &Value) -> &Value {
    report["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["client"] == "copilot")
        .unwrap_or_else(|| panic!("no verdict for copilot: {report:#}"))
}

fn problems<'a>(report: &'a Value, id: &str) -> Vec<&'a Value> {
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["id"] == id)
        .collect()
}

#[test]
fn a_server_locked_at_discover_and_started_after_the_window_blocks_copilot_and_works_through_the_bridge()
 {
    let (code, report) = check_copilot("5000", &["--revision", "dual", "--start-delay", "1.5"]);
    let start = &report["starts"][0];
    assert_eq!(start["path"], "initialize", "{report:#}");
    assert_eq!(start["discover_answer"], "result", "{report:#}");
    assert_eq!(start["initialize_code"], json!(-32022), "{report:#}");
    let locked = problems(&report, "discover.era-lock");
    assert_eq!(locked.len(), 1, "{report:#}");
    assert_eq!(locked[0]["severity"], "blocker");
    assert_eq!(locked[0]["client"], "copilot");
    assert!(!problems(&report, "discover.late").is_empty(), "{report:#}");
    let verdict = copilot_verdict(&report);
    assert_eq!(verdict["verdict"], "needs the bridge", "{verdict:#}");
    assert!(
        verdict["why"]
            .as_str()
            .unwrap()
            .starts_with("discover.era-lock"),
        "{verdict:#}"
    );
    assert_eq!(verdict["through_bridge"], "works", "{verdict:#}");
    assert_eq!(code, 1, "the blocker decides the exit code: {report:#}");
}

#[test]
fn a_start_longer_than_the_budget_fails_startup_time_directly_and_passes_through_the_bridge() {
    let (_, report) = check_copilot("1500", &["--start-delay", "3"]);
    let start = &report["starts"][0];
    assert_eq!(start["path"], "initialize", "{report:#}");
    assert_eq!(start["initialize_answer"], "none", "{report:#}");
    let direct: Vec<&Value> = problems(&report, "startup.time")
        .into_iter()
        .filter(|p| p["message"].as_str().unwrap().starts_with("start 1: "))
        .collect();
    assert_eq!(direct.len(), 1, "{report:#}");
    assert_eq!(direct[0]["severity"], "blocker");
    let verdict = copilot_verdict(&report);
    assert_eq!(verdict["verdict"], "needs the bridge", "{verdict:#}");
    assert_eq!(verdict["through_bridge"], "works", "{verdict:#}");
}

#[test]
fn a_server_that_fails_its_lists_on_the_2026_07_28_path_blocks_copilot_directly() {
    // server/discover answered at once (the runtime takes the 2026-07-28 path), and tools/list
    // refused: the Copilot harness would show no tools of it, whatever its initialize says.
    let table = json!({"replies":{
        "server/discover":{"result":{"resultType":"complete","supportedVersions":["2026-07-28"],
            "capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}},
        "initialize":{"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},
            "serverInfo":{"name":"s","version":"1"}}},
        "tools/list":{"error":{"code":-32603,"message":"no tools today"}}}});
    let (_dir, cmd) = crate::check::scripted(&table);
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let (_, report) = check_copilot_command("5000", &cmd);
    assert_eq!(report["starts"][0]["path"], "2026-07-28", "{report:#}");
    let lists: Vec<_> = problems(&report, "list")
        .into_iter()
        .filter(|p| p["message"].as_str().unwrap().contains("2026-07-28 path"))
        .collect();
    assert_eq!(lists.len(), 1, "{report:#}");
    assert_eq!(lists[0]["severity"], "blocker");
    assert_eq!(lists[0]["client"], "copilot");
}
