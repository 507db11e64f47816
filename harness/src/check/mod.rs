//! `harness check`: what VS Code and the Copilot harness will do with a server, before a user
//! finds out. It starts the server (directly when it answers a 2025-11-25 `initialize` itself,
//! else behind the bridge), does what each client does at start-up and at the first use, and
//! reports the tool ids, the tools that VS Code or the Copilot extension would refuse or hide,
//! and the other problems, each of a check with a stable id (catalog.rs), as a table, JSON or
//! JUnit (docs/harness.md, "`harness check`"). Exit 0 when nothing blocks, 1 when something
//! blocks, 2 for usage errors, 3 when an `--expect-fail` check found nothing (expect.rs).
pub mod catalog;
mod conn;
mod expect;
mod junit;
mod markdown;
mod probe;
mod render;
mod rules;
mod starts;
mod verdict;
mod via;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use serde_json::Value;

pub use conn::{default_answer, form_defaults};
pub use rules::{arrays_without_items, icon_dropped};

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Blocker,
    Warning,
}

/// What a problem does to the exit code, after `--expect-fail` and `--allow`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// A blocker that nothing expects or allows: exit 1.
    Blocking,
    /// A warning: never changes the exit code.
    Warning,
    /// Named by `--expect-fail`: present as expected.
    Expected,
    /// A blocker named by `--allow`.
    Allowed,
}

/// One problem of the report.
#[derive(Debug, Clone)]
pub struct Problem {
    pub severity: Severity,
    /// The check (its stable id, its client).
    pub check: &'static catalog::Check,
    pub message: String,
    pub tool: Option<String>,
    pub profile: Option<&'static str>,
    pub status: Status,
    /// Found by a start of the server without the bridge (starts.rs): it does not say what
    /// the bridge's path does.
    pub direct: bool,
}

impl Problem {
    pub fn new(severity: Severity, check: &'static catalog::Check, message: String) -> Self {
        Self {
            severity,
            check,
            message,
            tool: None,
            profile: None,
            direct: false,
            status: match severity {
                Severity::Blocker => Status::Blocking,
                Severity::Warning => Status::Warning,
            },
        }
    }

    /// The client it concerns: the check's own, or the profile that saw it when the check
    /// concerns both and only one saw it.
    pub fn client(&self) -> &'static str {
        match (self.check.client, self.profile) {
            (catalog::Client::Both, Some(p)) => p,
            (c, _) => c.name(),
        }
    }

    pub fn tool(mut self, name: &str) -> Self {
        self.tool = Some(name.into());
        self
    }

    pub fn profile(mut self, p: crate::format::Profile) -> Self {
        self.profile = Some(probe::profile_name(p));
        self
    }

    /// Marks a problem of a start without the bridge.
    pub fn direct(mut self) -> Self {
        self.direct = true;
        self
    }
}

/// How the check reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Path {
    /// The server answered 2025-11-25 `initialize` itself: VS Code talks to it directly.
    Direct,
    /// Through `mcp-bridge-vscode`.
    Bridge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ProfileArg {
    Local,
    Copilot,
    Both,
}

/// The form of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The table for people.
    Text,
    /// One JSON object (docs/harness-report.schema.json).
    Json,
    /// JUnit XML: one test case per check id.
    Junit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Via {
    /// Direct when the server answers a 2025-11-25 `initialize` and is not a 2026-07-28
    /// server; else through the bridge.
    Auto,
    Direct,
    Bridge,
}

/// Checks a server as VS Code (the Local harness) and the Copilot harness will see it.
#[derive(Parser, Debug)]
#[command(
    name = "harness check",
    version,
    override_usage = "harness check [OPTIONS] -- <COMMAND> [ARGS]...\n       harness check [OPTIONS] <URL>"
)]
struct Args {
    /// Which client to play: VS Code's Local harness, the Copilot harness, or both.
    #[arg(long, value_enum, default_value = "both")]
    profile: ProfileArg,
    /// The form of the report: text (the table), json or junit.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// The same as --format json.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Writes the report of --format to this file; stdout then gets the table.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Appends the report as Markdown tables to this file (a CI job's summary, such as
    /// $GITHUB_STEP_SUMMARY), escaped and capped.
    #[arg(long, value_name = "FILE")]
    summary: Option<PathBuf>,
    /// A check id (docs/harness.md) that the server is known to fail: its problems do not
    /// block, and its absence fails the run (exit 3). Repeatable.
    #[arg(long = "expect-fail", value_name = "ID")]
    expect_fail: Vec<String>,
    /// A check id whose blockers do not block (they are still reported). Repeatable.
    #[arg(long, value_name = "ID")]
    allow: Vec<String>,
    /// A file of `expect-fail ID` and `allow ID` lines (`#` comments).
    #[arg(long, value_name = "FILE")]
    expectations: Option<PathBuf>,
    /// Calls one tool after the lists (the only call with side effects), answering its input
    /// requests with the simulator's defaults.
    #[arg(long, num_args = 2, value_names = ["TOOL", "JSON_ARGS"])]
    call: Option<Vec<String>>,
    /// The bridge binary (default: mcp-bridge-vscode next to the harness binary, or
    /// MCP_BRIDGE_BIN).
    #[arg(long)]
    bridge: Option<PathBuf>,
    /// The CA file that the bridge trusts for the server at the URL (passed to the bridge).
    #[arg(long)]
    ca_file: Option<PathBuf>,
    /// How to reach the server: auto (try initialize directly first), direct or bridge.
    #[arg(long, value_enum, default_value = "auto")]
    via: Via,
    /// The bound of each wait for a response, in seconds.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,
    /// The Copilot runtime to play: its discover window, its answer to each discover outcome
    /// and its `initialize` budget.
    #[arg(long, value_enum, default_value = "1.0.102", value_name = "VERSION")]
    copilot_runtime: crate::copilot_runtime::Version,
    /// The runtime's discover window in milliseconds, in place of the version's (tests scale
    /// it down; default: HARNESS_COPILOT_WINDOW_MS, else the version's).
    #[arg(long, value_name = "MS")]
    copilot_window_ms: Option<u64>,
    /// The runtime's `initialize` budget in milliseconds, in place of 60 s (tests scale it
    /// down; default: HARNESS_INITIALIZE_BUDGET_MS, else 60000).
    #[arg(long, value_name = "MS")]
    initialize_budget_ms: Option<u64>,
    /// How many times the Copilot runtime's start is tried directly, each a fresh process.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    starts: u32,
    /// The URL of a server (Streamable HTTP), checked through the bridge.
    url: Option<String>,
    /// The command of a stdio server, after `--`.
    #[arg(last = true)]
    command: Vec<String>,
}

/// What the check was given.
pub struct Plan {
    profiles: Vec<crate::format::Profile>,
    format: Format,
    output: Option<PathBuf>,
    summary: Option<PathBuf>,
    expectations: expect::Expectations,
    call: Option<(String, Value)>,
    bridge: PathBuf,
    ca_file: Option<PathBuf>,
    via: Via,
    bound: Duration,
    target: Target,
    runtime: crate::copilot_runtime::Runtime,
    starts: u32,
}

/// The server: a command or a URL.
#[derive(Debug, Clone)]
pub enum Target {
    Command(Vec<String>),
    Url(String),
}

impl Target {
    fn describe(&self) -> String {
        match self {
            Target::Command(c) => c.join(" "),
            Target::Url(u) => u.clone(),
        }
    }
}

/// `harness check …` (argv without the program and `check`).
pub fn main(argv: &[String], runtime: &tokio::runtime::Runtime) -> ExitCode {
    let mut full = vec!["harness check".to_string()];
    full.extend(argv.iter().cloned());
    let args = match crate::args::parse::<Args>(&full) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let plan = match plan(args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("harness check: {e}");
            return ExitCode::from(2);
        }
    };
    let mut report = runtime.block_on(run(&plan));
    expect::apply(&mut report, &plan.expectations);
    report.verdicts = verdict::clients(&report, report.direct);
    let text = match plan.format {
        Format::Text => render::table(&report),
        Format::Json => format!("{:#}", render::json(&report)),
        Format::Junit => junit::render(&report),
    };
    if let Some(file) = &plan.summary
        && let Err(e) = append(file, &markdown::render(&report))
    {
        eprintln!("harness check: cannot write {}: {e}", file.display());
        return ExitCode::from(2);
    }
    match &plan.output {
        None => println!("{text}"),
        Some(file) => {
            if let Err(e) = std::fs::write(file, format!("{text}\n")) {
                eprintln!("harness check: cannot write {}: {e}", file.display());
                return ExitCode::from(2);
            }
            println!("{}", render::table(&report));
        }
    }
    ExitCode::from(report.exit_code())
}

/// Appends `text` to `file` (a job summary gathers the steps of the job).
fn append(file: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    f.write_all(text.as_bytes())
}

fn plan(args: Args) -> Result<Plan, String> {
    use crate::format::Profile;
    let target = match (args.url, args.command.is_empty()) {
        (Some(_), false) => return Err("give a URL or -- and a command, not both".into()),
        (None, true) => return Err("give -- and the command of the server, or its URL".into()),
        (Some(u), true) => {
            if !(u.starts_with("https://") || u.starts_with("http://")) {
                return Err(format!(
                    "'{u}' is not a URL (http:// or https://); a command goes after --"
                ));
            }
            Target::Url(u)
        }
        (None, false) => Target::Command(args.command),
    };
    if args.ca_file.is_some() && matches!(target, Target::Command(_)) {
        return Err("--ca-file applies to a URL only".into());
    }
    let call = match args.call {
        Some(v) => {
            let [tool, json] = v.as_slice() else {
                return Err("--call takes a tool name and its JSON arguments".into());
            };
            let parsed: Value = serde_json::from_str(json)
                .map_err(|e| format!("--call {tool}: the arguments are not JSON: {e}"))?;
            if !parsed.is_object() {
                return Err(format!(
                    "--call {tool}: the arguments must be a JSON object"
                ));
            }
            Some((tool.clone(), parsed))
        }
        None => None,
    };
    let bridge = match args.bridge {
        Some(b) => b,
        None => crate::process::sibling("MCP_BRIDGE_BIN", "mcp-bridge-vscode")?,
    };
    let expectations = expect::parse(&args.expect_fail, &args.allow, args.expectations.as_deref())?;
    Ok(Plan {
        expectations,
        output: args.output,
        summary: args.summary,
        profiles: match args.profile {
            ProfileArg::Local => vec![Profile::Local],
            ProfileArg::Copilot => vec![Profile::Copilot],
            ProfileArg::Both => vec![Profile::Local, Profile::Copilot],
        },
        format: if args.json { Format::Json } else { args.format },
        call,
        bridge,
        ca_file: args.ca_file,
        via: args.via,
        bound: Duration::from_secs(args.timeout),
        target,
        runtime: runtime(
            args.copilot_runtime,
            args.copilot_window_ms,
            args.initialize_budget_ms,
        ),
        starts: args.starts,
    })
}

/// The runtime of the options: the version's timing, scaled by the options, else by the
/// environment (`crate::copilot_runtime`).
fn runtime(
    version: crate::copilot_runtime::Version,
    window_ms: Option<u64>,
    budget_ms: Option<u64>,
) -> crate::copilot_runtime::Runtime {
    use crate::copilot_runtime::{BUDGET_ENV, Runtime, WINDOW_ENV};
    let env = |name: &str| std::env::var(name).ok()?.trim().parse::<u64>().ok();
    Runtime::of(version).scaled(
        window_ms.or_else(|| env(WINDOW_ENV)),
        budget_ms.or_else(|| env(BUDGET_ENV)),
    )
}

/// The whole report.
pub struct Report {
    pub target: String,
    pub path: Path,
    pub path_reason: String,
    pub runs: Vec<probe::Run>,
    pub tools: Vec<rules::ToolView>,
    pub problems: Vec<Problem>,
    /// The repairs that the bridge logged: (tool, JSON pointer of the schema it completed).
    pub repairs: Vec<(String, String)>,
    /// For an older server checked directly: the same check through the bridge.
    pub bridged: Option<Box<Report>>,
    /// Through the bridge: the revision of the upstream when it is older (None: 2026-07-28).
    pub upstream_revision: Option<String>,
    pub total_ms: u128,
    /// The checks of `--expect-fail` that found no problem (expect.rs).
    pub missing: Vec<&'static catalog::Check>,
    /// What was expected to fail and what was allowed.
    pub expectations: (Vec<&'static catalog::Check>, Vec<&'static catalog::Check>),
    /// The Copilot runtime played, and its starts of the server without the bridge.
    pub runtime: crate::copilot_runtime::Runtime,
    pub starts: Vec<starts::Start>,
    /// Which client can use the server as it is (verdict.rs).
    pub verdicts: Vec<verdict::Verdict>,
    /// Whether the server answered a 2025-11-25 `initialize` itself (`--via auto`).
    pub direct: verdict::Direct,
}

impl Report {
    /// True when a problem (of the server or of a tool) of this path blocks, neither expected
    /// nor allowed (not of [`Report::bridged`]: VS Code talks to an older server directly).
    pub fn blocks(&self) -> bool {
        self.problems
            .iter()
            .chain(self.tools.iter().flat_map(|t| t.problems.iter()))
            .any(|p| p.status == Status::Blocking)
    }

    /// 1 when something blocks, else 3 when an expected failure is absent, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.blocks() {
            1
        } else if !self.missing.is_empty() {
            3
        } else {
            0
        }
    }
}

async fn run(plan: &Plan) -> Report {
    let (path, path_reason, direct) = via::choose(plan).await;
    let mut report = run_path(plan, path, path_reason).await;
    report.direct = direct;
    // An older server that VS Code talks to directly: the report also says what the bridge
    // makes of it (it relays an older server, with its repairs), for an author who puts it
    // in front. Only the direct path decides the exit code.
    if path == Path::Direct && plan.via == Via::Auto {
        let why = "the same server through the bridge, which relays an older server and repairs what VS Code would refuse";
        let bridged = run_path(plan, Path::Bridge, why.into()).await;
        report.bridged = Some(Box::new(bridged));
    }
    // The Copilot runtime's own starts, without the bridge: a stdio server only (a URL is
    // reached through the bridge's URL form).
    if let Target::Command(cmd) = &plan.target
        && plan.profiles.contains(&crate::format::Profile::Copilot)
        && let Some((program, args)) = cmd.split_first()
    {
        for n in 1..=plan.starts {
            let program = PathBuf::from(program);
            let (start, problems) = starts::run(&program, args, &plan.runtime, plan.bound, n).await;
            report.starts.push(start);
            report.problems.extend(problems);
        }
    }
    report
}

/// Through the bridge: the revision of an older upstream, from the bridge's line `the upstream
/// server speaks revision <r>: the bridge relays it` (docs/stderr.md); `None` for 2026-07-28.
fn relayed_revision(runs: &[probe::Run]) -> Option<String> {
    runs.iter().flat_map(|r| r.stderr.iter()).find_map(|line| {
        let rest = line.split("the upstream server speaks revision ").nth(1)?;
        let (revision, _) = rest.split_once(':')?;
        Some(revision.to_string())
    })
}

/// The check of one path, for each profile of the plan.
async fn run_path(plan: &Plan, path: Path, path_reason: String) -> Report {
    let t0 = Instant::now();
    let mut runs = Vec::new();
    for &profile in &plan.profiles {
        let tag = format!("check-{}-{}", std::process::id(), uuid::Uuid::new_v4());
        let (program, args) = via::command_line(plan, path);
        let r = match conn::Conn::spawn(&program, &args, profile, &tag) {
            Ok(c) => probe::run(c, profile, plan.runtime, plan.bound, plan.call.as_ref()).await,
            Err(e) => {
                let mut r = probe::run_failed(profile, plan.runtime);
                r.problems.push(
                    Problem::new(
                        Severity::Blocker,
                        &catalog::START,
                        format!("{e} (the server does not start)"),
                    )
                    .profile(profile),
                );
                r
            }
        };
        crate::process::kill_tree(&tag);
        runs.push(r);
    }
    let mut problems = Vec::new();
    for r in &runs {
        problems.extend(r.problems.iter().cloned());
        problems.extend(rules::server_problems(r, path));
    }
    // The tools, their ids and the icons as the first profile saw them (VS Code's Local harness
    // when both run).
    let first = runs.iter().find(|r| r.init.is_some()).or(runs.first());
    let (tools, icons, repairs) = match first {
        Some(r) => {
            let repairs = rules::bridge_repairs(&r.stderr);
            let tools = rules::tools(r, path, &repairs);
            (tools, rules::icon_problems(r), repairs)
        }
        None => (Vec::new(), Vec::new(), Vec::new()),
    };
    problems.extend(icons);
    dedup(&mut problems);
    let upstream_revision = match path {
        Path::Bridge => relayed_revision(&runs),
        Path::Direct => None,
    };
    Report {
        target: plan.target.describe(),
        path,
        path_reason,
        runs,
        tools,
        problems,
        repairs,
        bridged: None,
        upstream_revision,
        total_ms: t0.elapsed().as_millis(),
        missing: Vec::new(),
        expectations: (Vec::new(), Vec::new()),
        runtime: plan.runtime,
        starts: Vec::new(),
        verdicts: Vec::new(),
        direct: verdict::Direct::Unknown,
    }
}

/// The same problem seen by both profiles is listed once, without a profile.
fn dedup(problems: &mut Vec<Problem>) {
    let mut out: Vec<Problem> = Vec::new();
    for p in problems.drain(..) {
        if let Some(q) = out
            .iter_mut()
            .find(|q| q.check == p.check && q.message == p.message && q.tool == p.tool)
        {
            if q.profile != p.profile {
                q.profile = None;
            }
            continue;
        }
        out.push(p);
    }
    *problems = out;
}
