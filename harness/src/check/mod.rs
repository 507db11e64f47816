//! `harness check`: what VS Code and the Copilot harness will do with a server, before a user
//! finds out. It starts the server (directly when it answers a 2025-11-25 `initialize` itself,
//! else behind the bridge), does what each client does at start-up and at the first use, and
//! reports the tool ids, the tools that VS Code or the Copilot extension would refuse or hide,
//! and the other problems (README.md, "For MCP server authors"). Exit 0 when nothing blocks, 1
//! when something blocks, 2 for usage errors.
mod conn;
mod probe;
mod render;
mod rules;
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

/// One problem of the report.
#[derive(Debug, Clone)]
pub struct Problem {
    pub severity: Severity,
    pub rule: String,
    pub message: String,
    pub tool: Option<String>,
    pub profile: Option<&'static str>,
}

impl Problem {
    pub fn new(severity: Severity, rule: &str, message: String) -> Self {
        Self {
            severity,
            rule: rule.into(),
            message,
            tool: None,
            profile: None,
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
    /// One JSON object on stdout instead of the table.
    #[arg(long)]
    json: bool,
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
    /// The URL of a server (Streamable HTTP), checked through the bridge.
    url: Option<String>,
    /// The command of a stdio server, after `--`.
    #[arg(last = true)]
    command: Vec<String>,
}

/// What the check was given.
pub struct Plan {
    profiles: Vec<crate::format::Profile>,
    json: bool,
    call: Option<(String, Value)>,
    bridge: PathBuf,
    ca_file: Option<PathBuf>,
    via: Via,
    bound: Duration,
    target: Target,
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
    let args = match Args::try_parse_from(&full) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let plan = match plan(args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("harness check: {e}");
            return ExitCode::from(2);
        }
    };
    let report = runtime.block_on(run(&plan));
    let text = if plan.json {
        format!("{:#}", render::json(&report))
    } else {
        render::table(&report)
    };
    println!("{text}");
    if report.blocks() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
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
    Ok(Plan {
        profiles: match args.profile {
            ProfileArg::Local => vec![Profile::Local],
            ProfileArg::Copilot => vec![Profile::Copilot],
            ProfileArg::Both => vec![Profile::Local, Profile::Copilot],
        },
        json: args.json,
        call,
        bridge,
        ca_file: args.ca_file,
        via: args.via,
        bound: Duration::from_secs(args.timeout),
        target,
    })
}

/// The whole report.
pub struct Report {
    pub target: String,
    pub path: Path,
    pub path_reason: String,
    pub runs: Vec<probe::Run>,
    pub tools: Vec<rules::ToolView>,
    pub problems: Vec<Problem>,
    pub total_ms: u128,
}

impl Report {
    /// True when a problem (of the server or of a tool) blocks.
    pub fn blocks(&self) -> bool {
        self.problems
            .iter()
            .chain(self.tools.iter().flat_map(|t| t.problems.iter()))
            .any(|p| p.severity == Severity::Blocker)
    }
}

async fn run(plan: &Plan) -> Report {
    let t0 = Instant::now();
    let (path, path_reason) = via::choose(plan).await;
    let mut runs = Vec::new();
    for &profile in &plan.profiles {
        let tag = format!("check-{}-{}", std::process::id(), uuid::Uuid::new_v4());
        let (program, args) = via::command_line(plan, path);
        let r = match conn::Conn::spawn(&program, &args, profile, &tag) {
            Ok(c) => probe::run(c, profile, plan.bound, plan.call.as_ref()).await,
            Err(e) => {
                let mut r = probe::run_failed(profile);
                r.problems.push(
                    Problem::new(
                        Severity::Blocker,
                        "start",
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
    let (tools, icons) = match first {
        Some(r) => {
            let repairs = rules::bridge_repairs(&r.stderr);
            (rules::tools(r, path, &repairs), rules::icon_problems(r))
        }
        None => (Vec::new(), Vec::new()),
    };
    problems.extend(icons);
    dedup(&mut problems);
    Report {
        target: plan.target.describe(),
        path,
        path_reason,
        runs,
        tools,
        problems,
        total_ms: t0.elapsed().as_millis(),
    }
}

/// The same problem seen by both profiles is listed once, without a profile.
fn dedup(problems: &mut Vec<Problem>) {
    let mut out: Vec<Problem> = Vec::new();
    for p in problems.drain(..) {
        if let Some(q) = out
            .iter_mut()
            .find(|q| q.rule == p.rule && q.message == p.message && q.tool == p.tool)
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
