//! The checks of `harness check`: each problem that it reports comes from one entry here, with
//! its stable id, its severity, the client it concerns and what that client does. The ids are
//! what `--expect-fail` and `--allow` name and what the JSON and JUnit reports carry, so an id
//! never changes once released; docs/harness.md has the same table, and a test keeps the two
//! equal (harness/tests/it/check_ids.rs).

/// The client that a check concerns (the `--profile` names; `both` for what both see).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// VS Code's Local harness.
    Local,
    /// The Copilot harness (the Copilot CLI's runtime).
    Copilot,
    /// Both harnesses.
    Both,
}

impl Client {
    pub fn name(self) -> &'static str {
        match self {
            Client::Local => "local",
            Client::Copilot => "copilot",
            Client::Both => "both",
        }
    }
}

/// One check.
#[derive(Debug, PartialEq, Eq)]
pub struct Check {
    /// The stable id.
    pub id: &'static str,
    /// The severity as the table says it (some checks block on one path or past a bound only).
    pub severity: &'static str,
    pub client: Client,
    /// What VS Code or the Copilot harness does (the last column of the table).
    pub what: &'static str,
}

macro_rules! checks {
    ($($name:ident = $id:literal, $sev:literal, $client:ident, $what:literal;)*) => {
        $(pub static $name: Check = Check {
            id: $id,
            severity: $sev,
            client: Client::$client,
            what: $what,
        };)*
        /// Every check, in the order of the table.
        pub static ALL: &[&Check] = &[$(&$name),*];
    };
}

checks! {
    START = "start", "blocker", Both,
        "The command does not start (the cause from the system).";
    DISCOVER_STOPS = "discover.stops", "blocker", Copilot,
        "The server exits or closes its stdout on `server/discover`, the Copilot harness's first request: it records a failure for good.";
    DISCOVER_INVALID_PARAMS = "discover.invalid-params", "blocker", Copilot,
        "The server answers `server/discover` with -32602 (the Python SDK 1.x does): the Copilot CLI 1.0.79–1.0.82 (`--copilot-runtime 1.0.82`) aborts the start and sends no `initialize`; runtime 1.0.102 sends `initialize` after it.";
    DISCOVER_ERA_LOCK = "discover.era-lock", "blocker when a start's discover answer comes after the window, else warning", Copilot,
        "Probed directly: `server/discover`, then `initialize` on the same connection. A server that locks its connection at `server/discover` (the Python SDK 2.x, the TypeScript SDK v2, FastMCP 4) refuses that `initialize` with -32022; the Copilot runtime sends it when the discover answer misses its window (9.8 s in 1.0.102), and the server never starts. The warning gives the margin.";
    DISCOVER_LATE = "discover.late", "warning", Copilot,
        "The answer to `server/discover` came after the runtime's window: it had sent `initialize` on the same connection already.";
    INITIALIZE = "initialize", "blocker", Both,
        "`initialize` fails, gets no answer in time or the server closes its stdout: the server does not start (with the last line of its stderr).";
    LIST = "list", "blocker", Both,
        "A declared list (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`) answers an error or nothing.";
    CURSOR = "cursor", "blocker", Both,
        "A `nextCursor` that is not a string, or one still there after 100 pages: VS Code pages for ever (R4).";
    TOOL_NAME = "tool-name", "blocker", Both,
        "A tool without a name.";
    TOOL_ID_CHARACTERS = "tool-id.characters", "warning", Both,
        "A tool name with characters outside `[A-Za-z0-9_-]`: VS Code logs a warning and shows the id with `_`.";
    TOOL_ID_LENGTH = "tool-id.length", "warning", Both,
        "`mcp_` + the prefix (13 characters of `serverInfo.title` or `name`, lower case, each run of other characters one `_`) + the tool name is cut to 64 characters.";
    TOOL_ID_COLLISION = "tool-id.collision", "blocker", Both,
        "Two tools get the same id after the cut: VS Code cannot tell them apart.";
    SCHEMA_DRAFT_07 = "schema.draft-07", "blocker", Both,
        "An `inputSchema` that is missing, or does not validate or compile as draft-07: VS Code omits the tool (R6 a).";
    SCHEMA_2020_12 = "schema.2020-12", "blocker", Both,
        "An `inputSchema` that does not compile as 2020-12, the dialect of MCP schemas.";
    SCHEMA_TYPE = "schema.type", "warning", Both,
        "The root of an `inputSchema` is not `type: \"object\"`.";
    SCHEMA_ITEMS = "schema.items", "blocker direct, warning through the bridge", Both,
        "An array schema without `items` (or with a false one): the Copilot extension stops every chat request (R6 b); the bridge adds `items: {}`. The message has the JSON pointer.";
    CAPABILITY_TOOLS = "capability.tools", "blocker when tools are hidden, else warning", Both,
        "Without the `tools` capability VS Code never lists tools (R1).";
    SERVER_INFO = "server-info", "warning", Both,
        "`serverInfo` lacks a name or a version: VS Code prefixes the tool ids with the name of the configuration entry.";
    INSTRUCTIONS = "instructions", "warning", Both,
        "`instructions` is not a string: VS Code ignores it.";
    LIST_SIZE = "list.size", "warning", Both,
        "More than 128 tools: VS Code's chat gives a model at most 128 in one request.";
    INPUT_ROOTS = "input.roots", "warning", Copilot,
        "The server asks for roots: the Copilot harness has none (C2).";
    ICONS = "icons", "warning", Both,
        "Icons that VS Code drops: types other than PNG, JPEG, GIF and WebP, `http:`/`https:` icons of a stdio server (O10).";
    STARTUP_TIME = "startup.time", "warning, blocker past the 60 s budget on Copilot", Both,
        "A slow `initialize`: VS Code logs \"Waiting for server to respond\" every 5 s; the Copilot runtime gives `initialize` 60 s, then records a failure and does not start the server again in the session. Each start (`--starts`) is reported against the budget.";
    STDOUT = "stdout", "warning", Both,
        "A stdout line that is not JSON-RPC: VS Code skips it (R7).";
    CALL = "call", "blocker, warning for `isError`", Both,
        "The `--call` fails, gets no answer, or its result has no `content` array (R5).";
    STOP = "stop", "warning", Both,
        "The server still runs 10 s after the end of its stdin: VS Code then sends SIGTERM to its tree (R7).";
    BRIDGE = "bridge", "warning", Both,
        "A warning or an error that the bridge logs about the server.";
}

/// The check of an id.
pub fn find(id: &str) -> Option<&'static Check> {
    ALL.iter().copied().find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_found() {
        for (i, c) in ALL.iter().enumerate() {
            assert!(ALL[..i].iter().all(|d| d.id != c.id), "{} twice", c.id);
            assert_eq!(find(c.id), Some(*c));
        }
        assert!(find("no-such-check").is_none());
    }
}
