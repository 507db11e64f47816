//! The one table of stderr lines (R7): every line that the bridge writes to stderr, with its
//! scope, its level, its text (the `<placeholders>` as docs/stderr.md writes them) and when it
//! is written. docs/stderr.md's tables are made from it (a test keeps them equal, and another
//! keeps the table true to the call sites of `log::bridge`, `log::write` and `log::vscode`).
//!
//! A new line, or a changed text: change its entry here, then write the tables of the docs with
//! `MCP_WRITE_DOCS=1 cargo test -p mcp-bridge-vscode --lib log::lines`.

use super::{Level, Scope, TAG};

/// The start of a line: its scope and level, or nothing (the sign-in line alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Head {
    /// `mcp-bridge-vscode: <scope>: <level>: `
    Tagged(Scope, Level),
    /// `mcp-bridge-vscode: `
    Untagged,
}

/// One line of stderr.
#[derive(Clone, Copy, Debug)]
pub struct Line {
    /// Its scope and level.
    pub head: Head,
    /// The text after the level, with `<placeholders>` for what the run fills in.
    pub text: &'static str,
    /// When the bridge writes it, and what it means (Markdown).
    pub when: &'static str,
}

/// A section of docs/stderr.md: its heading and the lines of its table.
#[derive(Clone, Copy, Debug)]
pub struct Section {
    /// The heading, without `## `.
    pub heading: &'static str,
    /// The lines of its table, in order.
    pub lines: &'static [Line],
}

impl Line {
    /// The whole line as docs/stderr.md writes it.
    pub fn full(&self) -> String {
        match self.head {
            Head::Tagged(scope, level) => {
                format!("{TAG}: {}: {}: {}", scope.target(), level.word(), self.text)
            }
            Head::Untagged => format!("{TAG}: {}", self.text),
        }
    }

    /// The row of docs/stderr.md.
    pub fn row(&self) -> String {
        format!("| `{}` | {} |", self.full(), self.when)
    }
}

impl Section {
    /// The table of docs/stderr.md, one line per row.
    pub fn table(&self) -> Vec<String> {
        let mut rows = vec![
            "| Line | What it means |".to_owned(),
            "| --- | --- |".to_owned(),
        ];
        rows.extend(self.lines.iter().map(Line::row));
        rows
    }
}

macro_rules! head {
    () => {
        Head::Untagged
    };
    ($scope:ident $level:ident) => {
        Head::Tagged(Scope::$scope, Level::$level)
    };
}

/// The table: `section "<heading>" { NAME [Scope Level] "text" "when"; … }`. Each line
/// becomes a const [`Line`], and [`SECTIONS`] lists them in order.
macro_rules! stderr_lines {
    ($(section $heading:literal {
        $($name:ident [$($head:ident)*] $text:literal $when:literal;)*
    })*) => {
        $($(
            #[doc = concat!("`", $text, "`")]
            pub const $name: Line = Line { head: head!($($head)*), text: $text, when: $when };
        )*)*

        /// The sections of docs/stderr.md, in order.
        pub const SECTIONS: &[Section] = &[$(Section { heading: $heading, lines: &[$($name),*] }),*];
    };
}

stderr_lines! {
    section "The connection, the requests and the stop" {
        INITIALIZE_FROM [Bridge Info]
            "initialize from <name> <version>"
            "VS Code sent `initialize`. The bridge starts the upstream command, or makes the HTTP client for the URL.";
        UPSTREAM_SERVER_READY [Bridge Info]
            "the upstream server is ready"
            "The upstream server answered `server/discover`, and VS Code gets the `initialize` result.";
        STILL_STARTING_ANSWERED_EARLY [Bridge Info]
            "the upstream server is still starting after <n> s: the bridge answered initialize itself; the server's lists follow with a list change when it is ready"
            "S1 ([rules.md](rules.md#s1)): the upstream server did not answer `server/discover` (or an older server its `initialize`) within `--answer-initialize-after`. VS Code has its `initialize` result (the three lists with list changes, empty until the server is ready); other requests wait for the start, bounded by `--discover-timeout`.";
        SIGN_IN_ANSWERED_EARLY [Bridge Info]
            "the upstream server needs a sign-in and the browser did not open: the bridge answered initialize itself and asks VS Code to open the sign-in once it is initialized; the server's lists follow with a list change when it is ready"
            "S1 ([rules.md](rules.md#s1)): a sign-in began during the start, VS Code declared URL elicitation, and the browser opener failed. VS Code has its `initialize` result at once rather than after `--answer-initialize-after`; after `notifications/initialized` it gets the sign-in as a URL elicitation (the sign-in line stays valid too).";
        READY_AFTER_EARLY_ANSWER [Bridge Info]
            "the upstream server is ready after the bridge's early answer to initialize"
            "S1: the start behind the early answer ended well; VS Code gets one list change per list that the server has.";
        EARLY_ANSWER_DIFFERS [Bridge Warn]
            "the upstream server's answer to initialize differs from the bridge's early answer (<differences>): VS Code keeps the early answer until it starts the server again"
            "S1: `<differences>` names what the server's own answer says otherwise: `it has no <lists>`, `it also declares <capabilities>`, `it has instructions`, `its name is another`. Restart the server in VS Code to get its own answer, or set `--answer-initialize-after off`.";
        UPSTREAM_SERVER_ANSWERED_SERVER_DISCOVER [Bridge Info]
            "the upstream server answered server/discover with <answer>: it is a server of an older revision"
            "(`--upstream-revision auto`) `<answer>` is `the error <code>` (-32601, -32602 or -32600, or -32022 naming an older revision) or, at a URL, `the HTTP status <status>` (400, 404 or 405 without an error of 2026-07-28 in its body: the decision table of L4 in [rules.md](rules.md#l4)); the bridge sends VS Code's `initialize` upstream ([older-servers.md](older-servers.md)).";
        UPSTREAM_SERVER_ENDED_SESSION_HTTP [Bridge Warn]
            "the upstream server ended the session (HTTP status 404): the bridge initializes a new one"
            "(URL form, older server) L4: the session expired; the request goes once more on a new one ([older-servers.md](older-servers.md)).";
        GET_STREAM_BROKE [Bridge Warn]
            "the GET stream of the upstream server broke: its requests and notifications outside a request are lost until the next session"
            "(URL form, older server) L4: the GET stream ended 3 times in a row without a message (an event id alone is none); it is not opened again before the next session.";
        NEW_SIGN_IN_NEW_SESSION [Bridge Info]
            "a new sign-in: the bridge initializes a new session of the upstream server (the session of the earlier sign-in is not used again)"
            "(URL form, older server) L4: a sign-in completed after the session was made; the next frame goes on a new session ([older-servers.md](older-servers.md)).";
        STREAM_RESUMED_WITHOUT_MESSAGE [Bridge Warn]
            "the event stream of the request was resumed <n> times without a message: the bridge gives the request up"
            "(URL form, older server) L4: the server closed a request's event stream <n> (3) times in a row with no message (an event id alone is none); the request fails with -32603 `transport_failed`.";
        MESSAGE_NO_ANSWER [Bridge Warn]
            "a message to the upstream server got no answer within <n> s: the bridge gave it up and sends the next one"
            "(URL form, older server) L4: the POST of a notification or a response did not end in <n> (10) s; the frames behind it go on.";
        MESSAGE_NOT_DELIVERED [Bridge Warn]
            "a message to the upstream server was not delivered: <error>"
            "(URL form, older server) The POST of a notification of VS Code or of its answer to a request of the server failed; VS Code gets nothing.";
        UPSTREAM_SERVER_REFUSED_INITIALIZE_POST [Bridge Info]
            "the upstream server refused the initialize POST with the HTTP status <status>: the bridge tries the HTTP+SSE transport of 2024-11-05"
            "(URL form) L4: the fallback to the transport of 2024-11-05.";
        UPSTREAM_SERVER_SPEAKS_HTTP_SSE [Bridge Info]
            "the upstream server speaks the HTTP+SSE transport of 2024-11-05"
            "(URL form) L4: the server's event stream named its endpoint; the requests go to that endpoint, and the responses come on the event stream.";
        EVENT_STREAM_HTTP_SSE_ENDED [Bridge Warn]
            "the event stream of the upstream server (HTTP+SSE) ended: its requests fail until VS Code starts the server again"
            "(URL form, HTTP+SSE of 2024-11-05) The responses come on that stream alone, so every request fails until a restart of the server.";
        UPSTREAM_SERVER_SPEAKS_REVISION_BRIDGE [Bridge Info]
            "the upstream server speaks revision <revision>: the bridge relays it"
            "The older server answered `initialize` with 2025-11-25, 2025-06-18, 2025-03-26 or 2024-11-05, and VS Code gets its result.";
        UPSTREAM_SERVER_HAS_NO_PROTECTED [Bridge Info]
            "the upstream server has no protected resource metadata: the bridge asks for the authorization server metadata at its origin (revision 2025-03-26)"
            "(URL form, sign-in) L4: no metadata at the URLs of RFC 9728; the authorization server is the one at the origin of the MCP URL, as revision 2025-03-26 has it ([older-servers.md](older-servers.md)).";
        INITIALIZE_OLDER_UPSTREAM_SERVER_FAILED [Bridge Warn]
            "initialize of the older upstream server failed: <error>"
            "The older server answered `initialize` with an error (`the upstream server answered with the error <code>`), with another revision, not in `--discover-timeout`, or it closed its output. VS Code gets an error for `initialize` and can send it again.";
        REFUSED_REQUEST_UPSTREAM_SERVER [Bridge Warn]
            "refused the request <method> of the upstream server: <cause>: <detail>"
            "An older server's sampling, elicitation or roots request failed a check of the input rounds, or a request of the server (also `ping`) came while 16 of its requests wait for VS Code (`too_many_input_requests`, L3); the server gets the error, VS Code nothing.";
        ANSWER_CLIENT_NOT_VALID [Bridge Warn]
            "the answer of the client is not valid: <cause>: <detail>"
            "VS Code's answer to a request of an older server is not valid (form content against the `requestedSchema`, a result without the shape); the server gets the error.";
        CANNOT_START_UPSTREAM_COMMAND [Bridge Warn]
            "cannot start the upstream command: <error>"
            "The bridge cannot start `<command>`; VS Code gets -32603 (`spawn_failed`) for `initialize`. Examine the path of the command in `args`.";
        SERVER_DISCOVER_FAILED [Bridge Warn]
            "server/discover failed: <error>"
            "The upstream server did not answer `server/discover` in `--discover-timeout` (`no response in <n> s`), answered with an error (`the upstream server answered with the error <code>`; a -32022 that names no revision of the bridge: `the upstream server supports none of the revisions of the bridge; it names <revisions>`, each a JSON string, at most 8), closed its output, or sent a result that is not valid. VS Code gets an error for `initialize` (`discover_failed`), and it can send `initialize` again.";
        CANNOT_MAKE_HTTP_CLIENT_UPSTREAM [Bridge Warn]
            "cannot make the HTTP client for the upstream server: <error>"
            "(URL form) A proxy variable or the TLS setup is not valid; VS Code gets -32603 (`not_connected`) for `initialize`.";
        CANNOT_REACH_SERVER_PROCESS [Bridge Warn]
            "cannot reach the server in the process: <error>"
            "(The embedded bridge) The bridge cannot open its in-memory pipe to the server of its own process; VS Code gets -32603 (`not_connected`) for `initialize`.";
        UPSTREAM_SERVER_REFUSED_REQUEST_HTTP [Bridge Warn]
            "the upstream server refused the request with the HTTP status <n>: give its token with --header-env Authorization=<variable>"
            "(URL form with a static `Authorization` header, which turns the sign-in off) The server answered 401 or 403. The request gets -32603 (`invalid_response`, detail `HTTP status <n>`); for `initialize`, `server/discover failed: the upstream server sent no JSON-RPC response (HTTP status <n>)` follows.";
        LISTEN_STREAM_ENDED_HTTP_STATUS [Bridge Warn]
            "the listen stream ended with the HTTP status <n>. A new stream follows in <time>."
            "(URL form) The server or a proxy answered the listen stream with 408, 429 or 5xx (but not 501); a new stream follows after the wait.";
        LISTEN_STREAM_FAILED_NO_MORE [Bridge Warn]
            "the listen stream failed with the HTTP status <n>. The bridge sends no more list changes."
            "(URL form) The server or a proxy answered the listen stream with another status than 408, 429 or 5xx (or 501), and no sign-in follows it (401 and 403 with a sign-in: see Sign-in).";
        STILL_WAITING_UPSTREAM_SERVER_REQUEST [Bridge Info]
            "still waiting for the upstream server: <method> (request <id>, <n> s)"
            "The upstream server did not answer in 10 s a request that the bridge sent for a request of VS Code, whatever the server's revision (also `server/discover`, and `initialize` for an older server). `<method>` is the method sent upstream, `<id>` the id of VS Code's request. The line comes again every 30 s until the response or the time limit.";
        REQUEST_NO_RESPONSE [Bridge Warn]
            "request <id> (<method>): no response in <limit>"
            "The request had no response in its time limit (lists, reads and completion 120 s; tool calls 3600 s). The upstream server gets `notifications/cancelled`; VS Code gets -32603 (`timeout`).";
        REJECTED_REQUEST_TOO_MANY_REQUESTS [Bridge Warn]
            "rejected request <id> (<method>): too many requests in flight"
            "VS Code sent a request at the limit of 64 requests in flight. The request gets -32603 (`too_many_requests`) at once.";
        TOOL_ADDED_ITEMS_SCHEMA_INPUT [Bridge Info]
            "tool '<name>': added an items schema at '<pointer>' of the input schema"
            "An array schema of the tool had no `items`, or an `items` that is false in JavaScript. The bridge added `items: {}` (R6), so that the Copilot extension accepts the tools.";
        TOOL_INPUT_SCHEMA_TOO_DEEP [Bridge Info]
            "tool '<name>': the input schema at '<pointer>' is too deep to examine"
            "The schema is deeper than 64 levels; the bridge did not examine the deeper part.";
        TOOL_LEFT_OUT_OF_TOOLS_LIST [Bridge Warn]
            "tool '<name>': left out of tools/list: <why>"
            "(URL form) The `x-mcp-header` annotations of the tool's input schema are not valid; VS Code does not get the tool.";
        REQUEST_INPUT_REQUESTS_UPSTREAM_SERVER [Bridge Warn]
            "request <id> (<method>): the input requests of the upstream server failed: <detail>"
            "(Input rounds) A round of input requests failed a check before VS Code saw it (the shape, an input kind that VS Code did not declare, a `requestedSchema` that does not compile, more than 16 requests in a round), or VS Code's answer is not valid (form content against the `requestedSchema`, a result without the shape). The request gets -32603 with the cause and the same detail (see Errors). `<detail>` names the input request: `input request '<key>': <what>`.";
        REQUEST_CLIENT_ANSWERED_INPUT_REQUEST [Bridge Info]
            "request <id> (<method>): the client answered an input request with an error: <message>"
            "(Input rounds) VS Code refused a sampling or roots request (for example -32000, the user refused). The request gets VS Code's error unchanged.";
        REQUEST_UPSTREAM_SERVER_ASKED_INPUT [Bridge Warn]
            "request <id> (<method>): the upstream server asked for input in <n> rounds"
            "(Input rounds) The upstream server answered `input_required` 10 times; the request gets -32603 (`too_many_rounds`).";
        INPUT_REQUEST_BRIDGE_REFUSED_URL [Bridge Warn]
            "input request '<key>': the bridge refused the URL of a URL elicitation, and the upstream server gets decline"
            "(Input rounds) A URL elicitation with a URL other than `https`, or `http` to a loopback host (`localhost`, 127.0.0.0/8, `[::1]`). VS Code never sees the URL.";
        STILL_WAITING_ANSWERS_CLIENT_INPUT [Bridge Info]
            "still waiting for the answers of the client to the input requests of <method> (request <id>, <n> s)"
            "(Input rounds) VS Code did not answer the bridge's requests (`b-N`) of a round in 10 s; again every 30 s until the answers or the limit of 3600 s. A person fills the form; this is normal.";
        REQUEST_NO_ANSWERS_CLIENT_3600 [Bridge Warn]
            "request <id> (<method>): no answers of the client in 3600 s (input requests without an answer: <n> of <m>)"
            "(Input rounds) The wait for VS Code's answers reached its limit. Each unanswered `b-N` request gets `notifications/cancelled` (reason `no answer in time`); the request gets -32603 (`input_timeout`).";
        REQUEST_UPSTREAM_SERVER_REFUSED_REQUEST [Bridge Warn]
            "request <id> (<method>): the upstream server refused the request state after an input wait of <t>"
            "(Input rounds) The upstream server answered a retry that carried its `requestState` with -32602 (the state expired, or the server started again). `tools/call` gets a result with `isError` and the text \"The upstream server did not accept the saved state of the request. … Run the tool again.\"; other methods get an error with the upstream code and data and that text (\"… Send the request again.\").";
        REQUEST_SENT_CLIENT_AS_REQUEST [Bridge Debug]
            "request <id> (<method>): sent <method> to the client as request \"b-<n>\""
            "(Input rounds, debug) One request of an input round went to VS Code.";
        DROPPED_ANSWER_CLIENT_NO_PENDING [Bridge Debug]
            "dropped an answer of the client to no pending request (\"<id>\")"
            "(Input rounds, debug) A late answer (after a cancellation: VS Code ignores the bridge's `notifications/cancelled`), a second answer, or an unknown `b-` id. Normal.";
        INPUT_REQUEST_DROPPED_ROOT_SCHEME [Bridge Debug]
            "input request '<key>': dropped a root with the scheme <scheme>: not a file:// URI"
            "(Input rounds, debug, O3) Only `file://` roots go upstream. The line names only the scheme: the rest of a URI can carry a secret.";
        DROPPED_LINE_UPSTREAM_SERVER [McpRouter Warn]
            "dropped a line of the upstream server: <cause>"
            "A line of the upstream server is not valid JSON-RPC, or it is longer than `--max-line-bytes`. When the line names a request in flight, that request fails with `invalid_response`.";
        UPSTREAM_SERVER_DID_NOT_STOP [Bridge Warn]
            "the upstream server did not stop after a kill signal"
            "The stop sequence gave up on a process that survived the kill signal.";
        DROPPED_FRAME_TOO_LONG [Bridge Warn]
            "dropped a frame longer than <limit> bytes"
            "(The embedded bridge) One of the first lines of stdin, read before the bridge knows whether VS Code or a client of 2026-07-28 sends them, is longer than the line limit of its options; it is dropped.";
        STDIO_SERVER_EXITED_EXIT_CODE [McpStdio Warn]
            "stdio server exited (exit code <n>); no restart is left"
            "The upstream server stopped (on POSIX the parenthesis can name a signal instead). The line of the bridge about the exit comes after it.";
        UPSTREAM_SERVER_EXITED_CODE [Bridge Err]
            "the upstream server exited with code <n>"
            "The upstream server stopped while VS Code was connected. Each request in flight got -32603 (`upstream_exited`), and the bridge exits with code 1. On POSIX the line can end with `stopped on signal <n>`, without a known status with `stopped`, and without a process (the embedded bridge) it is `the upstream server closed the connection`.";
        CANNOT_START_LISTEN_STREAM_CLIENT [Bridge Warn]
            "cannot start the listen stream: <error>. The client gets no list changes."
            "(Listen stream) the bridge cannot send `subscriptions/listen` after `notifications/initialized` (the upstream server closed its input).";
        LISTEN_STREAM_ENDED_NEW_STREAM [Bridge Warn]
            "the listen stream ended: <error>. A new stream follows in <time>."
            "(Listen stream) the listen stream stopped without a result (a broken response, or no acknowledgment in 120 s). After the wait (0.5 s, doubling to 30 s; back to 0.5 s after a stream that lived 10 s), VS Code gets one list change for each declared list and one update for each subscribed resource.";
        UPSTREAM_SERVER_ENDED_LISTEN_STREAM [Bridge Info]
            "the upstream server ended the listen stream. A new stream follows in <time>."
            "(Listen stream) the upstream server ended the stream with its result or with `notifications/cancelled` (for example at its stop). VS Code gets no `notifications/cancelled`.";
        UPSTREAM_SERVER_REFUSED_LISTEN_STREAM [Bridge Warn]
            "the upstream server refused the listen stream with the error <code>: <message>. The bridge sends no more list changes."
            "(Listen stream) VS Code gets no more notifications until the next `resources/subscribe` or `resources/unsubscribe`.";
        LISTEN_STREAM_CHANGE_SUBSCRIPTIONS_FAILED [Bridge Warn]
            "the listen stream for a change of the subscriptions failed: <error>"
            "(Listen stream) the new stream of `resources/subscribe` or `resources/unsubscribe` failed before its acknowledgment. VS Code gets the error, and the old stream and subscriptions stay.";
        BRIDGE_DID_NOT_STOP_8 [Vscode Warn]
            "the bridge did not stop in <n> s after the end of stdin, thus it stops now"
            "The bridge did not stop within 8 s (`<n>`) after the end of stdin: a request did not stop after its cancellation. The watchdog killed the upstream's process group, and the bridge exits with code 0.";
        CANNOT_START_WATCHDOG [Vscode Warn]
            "cannot start the watchdog"
            "The thread of the 8 s bound of the stop did not start; the bridge serves on without that bound.";
        BRIDGE_STOPPED_BECAUSE_INTERNAL_ERROR [Vscode Err]
            "the bridge stopped because of an internal error: <error>"
            "The bridge has an internal error (a bug). It kills the upstream's process group and exits with code 1. `<error>` is the panic's message and location when the message is a literal of the source (`<message> at <file>:<line>`); a formatted message can hold a value of the run, so then it is `a panic at <file>:<line> (its message is not written: it could hold a secret)`.";
    }
    section "Debug lines" {
        UPSTREAM_REQUEST_OUTCOME [Bridge Debug]
            "upstream request <uid> (<method>, round <n> of client request <id>): <outcome> after <ms> ms"
            "One line per upstream exchange. `<outcome>` is `response`, `error <code>`, `canceled`, `no response in time` or `failed (<error>)`.";
        UPSTREAM_PROGRESS_WITHOUT_TOKEN [Bridge Debug]
            "dropped a progress notification of the upstream server without a known token"
            "The token of a `notifications/progress` names no request in flight (a late one, after the response).";
        UPSTREAM_RESPONSE_TO_NO_REQUEST [Bridge Debug]
            "dropped a response of the upstream server to no request in flight"
            "A late response (after a cancellation or the time limit), a second one, or an unknown id.";
        UPSTREAM_REQUEST_OF_MODERN_SERVER [Bridge Debug]
            "dropped the request <method> of the upstream server: a server of revision 2026-07-28 sends no requests"
            "A server of 2026-07-28 asks for input within the result of a request (`input_required`), never with a request of its own.";
        UPSTREAM_CANCELLED [Bridge Debug]
            "dropped the notification notifications/cancelled of the upstream server"
            "(A server of 2026-07-28) The server's `notifications/cancelled` never reaches VS Code as it came (quirk of M1: the ids of both sides are integers). An older server's goes to VS Code with the id mapped (L3).";
        UPSTREAM_NOTIFICATION_DROPPED [Bridge Debug]
            "dropped the notification <method> of the upstream server"
            "A notification of a server of 2026-07-28 that belongs to no request and to no listen stream, and is not a log message.";
        REQUEST_OF_STOPPED_UPSTREAM [Bridge Debug]
            "dropped the request <method> of a stopped upstream server"
            "(Older server) A request of the server that arrived while it stopped.";
        OLDER_REQUEST_SENT_TO_CLIENT [Bridge Debug]
            "sent the request <method> of the upstream server to the client as request \"<id>\""
            "(Older server, L3) A sampling, elicitation or roots request of the server went to VS Code with the bridge's own id.";
        SIGN_IN_ELICITATION_SENT [Bridge Debug]
            "sent elicitation/create to the client as request \"<id>\" for a sign-in"
            "(Sign-in) The URL elicitation of a sign-in after `notifications/initialized` went to VS Code.";
        CLIENT_RESPONSE_TO_NO_REQUEST [Bridge Debug]
            "dropped a response of the client to no request of the bridge"
            "A response of VS Code whose id is not a string: the bridge's own requests have string ids (`b-<n>`).";
        CLIENT_RESPONSE_WITHOUT_ID [Bridge Debug]
            "dropped a response of the client without a valid id"
            "A response of VS Code without an id that the bridge can read.";
        CLIENT_SENT_INITIALIZED [Bridge Debug]
            "the client sent notifications/initialized"
            "VS Code finished its side of the initialization.";
        CLIENT_NOTIFICATION_IGNORED [Bridge Debug]
            "ignored the notification <method> of the client"
            "A notification of VS Code that the bridge neither handles nor sends upstream.";
        LISTEN_EVENT_OF_CLOSED_STREAM [Bridge Debug]
            "dropped an event of the listen stream <uid>, which is no longer open"
            "(Listen stream) An event of a stream that a newer stream replaced.";
        LISTEN_EVENT_DROPPED [Bridge Debug]
            "dropped the event <method> of the listen stream <uid>"
            "(Listen stream) An event that the filter of the stream drops (`listen::filter`), or one of a stream that is no longer the active one.";
        REFRESHED_ACCESS_TOKEN [Bridge Debug]
            "refreshed the access token"
            "(Sign-in) The refresh grant gave a new access token.";
        NO_GET_STREAM [Bridge Debug]
            "the upstream server has no GET stream (HTTP status 405)"
            "(URL form, older server) The server sends nothing outside the responses of requests.";
        ELICITATION_COMPLETE_NOT_OPENED [Bridge Debug]
            "dropped the notification notifications/elicitation/complete of the upstream server: no elicitation of its own with that id is open"
            "(older server) O1, L3: the server completed an elicitation that it did not open, or one that is no longer open (such as the bridge's own sign-in prompt); VS Code gets nothing.";
        REQUEST_STREAM_RESUMED [Bridge Debug]
            "the event stream of a request ended before its response: the bridge resumes it with Last-Event-ID"
            "(URL form, older server) The SSE response of a request broke; the bridge asks for the rest of it with the id of its last event.";
        NO_DELETE_EARLIER_SIGN_IN [Bridge Debug]
            "no DELETE of the upstream session: it belongs to an earlier sign-in"
            "(URL form, older server) L4: at the stop, the session was made before the last sign-in; its id is not sent with the new token.";
        SESSION_DELETED [Bridge Debug]
            "DELETE of the upstream session: <outcome>"
            "(URL form, older server) At the stop, the bridge ends the session; `<outcome>` is `HTTP status <n>` or the error.";
    }
    section "Sign-in" {
        SIGN_IN_AT []
            "sign in at <url>"
            "(Sign-in) The upstream server needs a sign-in; `<url>` is the authorization URL. Open it in a browser when no browser opened (`--no-browser`, a host without a desktop). Once per sign-in.";
        TOKENS_STAY_MEMORY_TOKEN_STORE [Bridge Info]
            "the tokens stay in memory (--token-store memory): each start needs a new sign-in"
            "(Sign-in) The store of the tokens, at the start of the URL form.";
        BROWSER_DID_NOT_OPEN_OPEN [Bridge Warn]
            "the browser did not open: open the URL of the sign-in line in a browser"
            "(Sign-in) The browser opener did not start, or stopped with an error; one of the two lines below comes first.";
        CANNOT_START_BROWSER_OPENER [Bridge Warn]
            "the bridge cannot start the browser opener: <error>"
            "(Sign-in) The browser opener of the host did not start; `<error>` is the kind of the error.";
        BROWSER_OPENER_STOPPED_WITH_ERROR [Bridge Warn]
            "the browser opener stopped with an error"
            "(Sign-in) The opener of the host ended with an error status.";
        START_URL_REQUESTED_TWICE [Bridge Warn]
            "The start URL of the sign-in received a second request, thus the bridge stopped the sign-in. Another program on the host of the bridge possibly opened the URL. Restart the server to sign in again. When this occurs again on a host that other users share, use --no-browser."
            "(Sign-in) The request gets `sign_in_start_reused`.";
        START_URL_REQUESTED_AFTER_REDIRECT [Bridge Warn]
            "The start URL of the sign-in received a second request after the redirect. Another program possibly signed in with a different account. To be sure, run logout and sign in again."
            "(Sign-in) The used start URL was requested again within 10 s after the sign-in ended. If you did not open it twice yourself, run `mcp-bridge-vscode logout <url>` and restart the server.";
        SIGN_IN_ANSWER_WRONG_ISSUER [Bridge Warn]
            "The answer of the sign-in did not name the authorization server of the upstream server (RFC 9207), thus the bridge did not use it."
            "(Sign-in) The redirect's `iss` names another authorization server than the one of the sign-in; the request gets the error of the sign-in.";
        ANOTHER_PROGRAM_USES_REDIRECT_PORT [Bridge Warn]
            "Another program uses the redirect port <n>. Stop that program, or set a different port with --redirect-port."
            "(Sign-in) The receiver cannot listen (`redirect_port_unavailable`) because the port is in use.";
        CANNOT_LISTEN_REDIRECT_PORT [Bridge Warn]
            "The bridge cannot listen on the redirect port <n>. Set a different port with --redirect-port."
            "(Sign-in) The receiver cannot listen for another reason (`redirect_port_unavailable`).";
        SIGN_DID_NOT_COMPLETE_S [Bridge Warn]
            "The sign-in did not complete in <n> s."
            "(Sign-in) Nobody completed the sign-in in `--sign-in-timeout`; the request gets `sign_in_timeout`.";
        USER_DECLINED_SIGN [Bridge Info]
            "The user declined the sign-in."
            "(Sign-in) VS Code's URL elicitation was declined or cancelled; for 60 s the bridge asks nothing new.";
        CLIENT_DID_NOT_DECLARE_URL [Bridge Info]
            "the client did not declare URL elicitation: a later sign-in fails, and a restart of the server signs in again"
            "(Sign-in) A sign-in after `notifications/initialized` with a client that cannot open a URL.";
        UPSTREAM_SERVER_NEEDS_SIGN_BUT [Bridge Warn]
            "The upstream server needs a sign-in, but the bridge runs in the sandbox of VS Code. Disable the sandbox for this server in the configuration of VS Code."
            "(Sign-in) `SANDBOX_RUNTIME=1`; the request gets `sandbox`.";
        SANDBOX_CANNOT_START_SIGN_IN [Bridge Warn]
            "The bridge runs in the sandbox of VS Code, thus it cannot start the sign-in. Disable the sandbox for this server in the configuration of VS Code."
            "(Sign-in) `SANDBOX_RUNTIME=1`, and a sign-in was needed after `initialize`; the request gets `sandbox`.";
        AUTHORIZATION_URL_NOT_VALID_THUS [Bridge Warn]
            "the authorization URL is not valid, thus the bridge does not open it"
            "(Sign-in) The authorization server's endpoint gave a URL that is not `https` (or `http` to a loopback host), has a fragment or user information, has a parameter twice (a `redirect_uri` or `code_challenge` in the endpoint's own query), or is longer than 8192 characters.";
        REFRESH_TOKEN_FAILED [Bridge Info]
            "the refresh of the token failed: <error>"
            "(Sign-in) The refresh grant failed; the next 401 starts a sign-in. After `invalid_client` (the authorization server forgot the client) the next sign-in registers again.";
        PROTECTED_RESOURCE_METADATA_NAMES_ANOTHER [Bridge Info]
            "the protected resource metadata names another authorization server than the one of the stored sign-in: the bridge signs in anew"
            "(Sign-in) The stored refresh token is not sent to the new server ([sign-in.md](sign-in.md#bound-to-the-issuer)); the stored access token serves while it is valid.";
        PROTECTED_RESOURCE_METADATA_OTHER_RESOURCE [Bridge Warn]
            "the protected resource metadata at <url> names the resource <resource>, but the upstream server is <identifier>: the bridge does not use it (RFC 9728 §3.3)"
            "(Sign-in) The document's `resource` is not the URL of the request (a document of the challenge's `resource_metadata`) or the identifier into which its well-known URI was inserted ([sign-in.md](sign-in.md#bound-to-the-issuer)); `<resource>` is the server's text, quoted. No token is asked for; the request gets `sign_in_failed`.";
        STORED_SIGN_IN_OTHER_RESOURCE [Bridge Info]
            "the stored sign-in is for the resource <resource>, not for the upstream server: the bridge signs in anew"
            "(Sign-in) A stored sign-in is used only for the resource that it was obtained for: at the start, the identifier of the URL or of its origin; after discovery, the `resource` of the accepted metadata. Its tokens are not sent, and the next sign-in replaces it.";
        STORED_SIGN_IN_CANNOT_BE_READ [Bridge Warn]
            "the stored sign-in cannot be read: <error>"
            "(Sign-in) At the start, the token store failed to read the sign-in of the URL; the bridge starts without it.";
        SERVER_DISCOVER_FAILED_SIGN_FAILED [Bridge Warn]
            "server/discover failed: the sign-in failed (<error>)"
            "(Sign-in) The sign-in of `initialize` did not complete; VS Code gets the sign-in's error for `initialize`.";
        LISTEN_STREAM_FAILED_HTTP_STATUS [Bridge Warn]
            "the listen stream failed with the HTTP status <n>. A new stream follows after the next sign-in."
            "(Sign-in) The listen stream got 401/403 and no refresh helped; the next line follows the next sign-in.";
        SIGN_IN_COMPLETED_LISTEN_AGAIN [Bridge Info]
            "a sign-in completed. The bridge opens the listen stream again."
            "(Sign-in) The sign-in of another request completed after the listen stream's 401/403.";
        SIGN_WAS_NOT_STORED [Bridge Warn]
            "the sign-in was not stored: <error>"
            "(Sign-in) The token store failed to save; the tokens still serve this process.";
    }
    section "Token stores and `logout`" {
        TOKENS_ARE_KEYCHAIN_HOST_SERVICE [Bridge Info]
            "the tokens are in the keychain of the host (service \"mcp-bridge-vscode\")"
            "The start of the URL form: the store (`--token-store keychain`, or `auto` with a keychain). The other stores: the next lines, and `the tokens stay in memory (--token-store memory): each start needs a new sign-in` (see Sign-in).";
        TOKENS_IN_ENCRYPTED_FILES [Bridge Info]
            "the tokens are in encrypted files in <dir>"
            "The start of the URL form: the file store (`--token-store file`, or `auto` without a keychain and with a token key).";
        TOKENS_IN_MEMORY_NO_KEY [Bridge Info]
            "the tokens stay in memory: the keychain is not available (<error>), and no token key is set (MCP_BRIDGE_TOKEN_KEY or --token-key-file). Each start needs a new sign-in"
            "The start of the URL form with `auto`: neither store is there.";
        TOKENS_IN_MEMORY_NO_FILE_STORE [Bridge Info]
            "the tokens stay in memory: the keychain is not available (<error>), and the file store did not start (<error>). Each start needs a new sign-in"
            "The start of the URL form with `auto`: a token key is set, but the file store failed.";
        KEYCHAIN_STOPPED_ANSWER_REST_PROCESS [Bridge Warn]
            "the keychain stopped to answer (<error>). For the rest of the process, <store>"
            "`auto`: the keychain failed after the start; `<store>` is `the tokens are in encrypted files in <dir>`, `the tokens stay in memory (the file store did not start: <error>), and the next start needs a new sign-in` or `the tokens stay in memory, and the next start needs a new sign-in`.";
        TOKEN_STORE_DID_NOT_OPEN [Vscode Err]
            "the token store did not open: <cause>"
            "Exit code 2. Causes: `the file store needs a token key: set MCP_BRIDGE_TOKEN_KEY or give --token-key-file`, `the token key of MCP_BRIDGE_TOKEN_KEY is not 64 hexadecimal digits`, `MCP_BRIDGE_TOKEN_KEY and --token-key-file are both given: …`, `--token-key-file: <why>`, `the Secret Service of the host does not answer: <error>`, `the keychain is locked, and without a display (DISPLAY, WAYLAND_DISPLAY) no prompt can unlock it`, `the keychain did not answer in 25 s`, `cannot make the token directory <dir>: <error>`.";
        STORED_SIGN_STORE_CANNOT_BE [Bridge Warn]
            "a stored sign-in in the <store> store cannot be read (<why>); the bridge treats it as absent"
            "A file that does not decrypt, keychain parts that do not belong together, a record that does not parse.";
        INDEX_STORED_SIGN_INS_STORE [Bridge Warn]
            "the index of the stored sign-ins in the <store> store was not updated (<error>); …"
            "The sign-in is stored, but `logout` will need the server's metadata to find it.";
        OLDEST_STORED_SIGN_STORE_WAS [Bridge Warn]
            "the oldest stored sign-in of the <store> store was not deleted (<error>)"
            "The index was full (256) and its oldest sign-in could not be deleted with its entry; `logout --all` cannot find it in a keychain.";
        LOGOUT_DELETED_STORED_SIGN_ACCOUNT [Vscode Info]
            "logout deleted the stored sign-in of the account \"<label>\". Run MCP: Restart Server in VS Code to sign in again"
            "`logout <url>` deleted the tokens and the client of the account for the URL.";
        LOGOUT_FOUND_NO_STORED_SIGN [Vscode Info]
            "logout found no stored sign-in of the account \"<label>\" for the URL"
            "Nothing to delete (exit code 0). Give the same URL, `--account` and `--redirect-port` as the server entry.";
        LOGOUT_DELETED_STORED_SIGN_INS [Vscode Info]
            "logout deleted <n> stored sign-ins"
            "`logout --all`: the indexed sign-ins and those that a search of the keychain found outside the index; one of the two lines below follows.";
        DELETED_TOKEN_DIRECTORY [Vscode Info]
            "deleted the token directory <dir>"
            "`logout --all`: the directory of the file store is gone.";
        CANNOT_DELETE_TOKEN_DIRECTORY [Vscode Err]
            "cannot delete the token directory <dir>: <error>"
            "`logout --all`: exit code 1.";
        LOGOUT_SKIPS_STORE [Vscode Warn]
            "logout skips the <store> store: <error>"
            "`auto`: a store that does not open.";
        LOGOUT_FAILED_STORE [Vscode Err]
            "logout failed in the <store> store: <error>"
            "A deletion failed (exit code 1).";
        LOGOUT_KEPT_STORED_SIGN_STORE [Vscode Err]
            "logout kept a stored sign-in in the <store> store: <why>. …"
            "A sign-in outside the index, and the metadata of the server cannot be read or does not cover the URL (exit code 1).";
        MEMORY_STORE_KEEPS_NO_SIGN [Vscode Info]
            "the memory store keeps no sign-in after the end of the process: logout has nothing to delete"
            "`logout --token-store memory`.";
    }
    section "Secrets and `secret`" {
        SECRET_MISSING [Vscode Err]
            "the secret <name> is missing or cannot be read (<why>): run <command> in a terminal, then restart the server"
            "A secret of `--secret-env` or `--secret-header` is in no store, or a store that may have it does not answer (docs/secrets.md). Nothing starts; `initialize` gets `secret_missing`, then exit code 2. `<command>` is `secret set <name>` as the bridge was installed.";
        SECRET_ELSEWHERE [Vscode Err]
            "the secret <name> may not go to <place>: it is bound to <bound>, and the bridge sent it nowhere. …"
            "The configuration gives a secret to another command, folder or origin than its binding. Nothing starts; `initialize` gets `secret_elsewhere`, then exit code 2.";
        SECRET_KEPT [Vscode Info]
            "the secret <name> is kept in <store> for <place>"
            "`secret set` succeeded (exit code 0).";
        SECRET_SET_REFUSED [Vscode Err]
            "secret set: <why>"
            "`secret set` refused the value or the place (exit code 2): an empty value, a value that is not UTF-8 or holds NUL, a header secret that is not one line of visible ASCII, a file that cannot be read or is larger than 64 KiB, a `--command` or `--folder` path that does not exist.";
        SECRET_NOT_KEPT [Vscode Err]
            "secret set: no store kept the secret <name>, and the bridge never keeps a secret in memory (<why>)"
            "Neither the keychain nor the encrypted files kept the secret (exit code 1).";
        SECRET_DELETED [Vscode Info]
            "deleted the secret <name> from <store>"
            "`secret delete` (exit code 0).";
        SECRET_NOTHING_TO_DELETE [Vscode Info]
            "no store keeps the secret <name>: nothing to delete"
            "`secret delete` of a name that no store keeps (exit code 0).";
        SECRET_DELETE_FAILED [Vscode Err]
            "secret delete failed in <store>: <error>"
            "A store refused the deletion (exit code 1).";
    }
    section "The command line" {
        OPTION_NOT_KNOWN [Vscode Err]
            "the option <option> is not known"
            "The arguments are not valid; the usage follows, and the exit code is 2. The other texts: `the option <option> needs a value`, `the option <option> takes no value`, `the value of the option <option> is not valid: <rule>`, `the command after -- is missing`, `the command needs -- before it`, `an option is not valid UTF-8`, `the arguments are not valid`, and for the URL form: `the URL is not valid: <hint>`, `the option <option> applies only to the URL form, not to -- and a command`, `give a URL or -- and a command, not both`, `the option <option> follows the URL: give the options before the URL`, `an argument follows the URL: the URL is the last argument`, `the header <name> of <option> is refused: <hint>`, `the header <name> occurs more than one time in --header and --header-env`, `a static authorization header and the sign-in options exclude each other`, `the options <option> and <option> exclude each other`, `the option <option> needs <option>`, `the option <option> applies only to -- and a command, not to the URL form`, `the header <name> of --secret-header is not valid with the values of its secrets: a value is not a valid HTTP header value`; for `secret`: `secret needs set, list or delete`, `secret set needs where the secret may go: --origin <url> or --command <program>`. No text has a value of an option or a part of the URL.";
        URL_NOT_VALID [Vscode Err]
            "the URL is not valid: <hint>"
            "The URL of the URL form breaks the URL rule (exit code 2). The hints: `use https: http is permitted only for a loopback host such as 127.0.0.1`, `remove the user and the password from the URL: give a secret with --header-env`, `remove the fragment from the URL`, `the URL has no host`, `the port 0 is not valid`, `the port is not a number from 1 to 65535`, `write the URL in visible ASCII characters: use the xn-- form of a host name and percent-encoding`, `the URL cannot be parsed`.";
        HEADER_REFUSED [Vscode Err]
            "the header <name> of <option> is refused: <hint>"
            "A refused header name (exit code 2). The hints: `the bridge or the HTTP connection sets this header`, `the header names that start with mcp- are for the protocol`, `put the user and the password of the proxy into the proxy URL of HTTPS_PROXY or ALL_PROXY`.";
        CANNOT_USE_CA_CERTIFICATES_CA [Vscode Err]
            "cannot use the CA certificates of --ca-file: <error>"
            "The file of `--ca-file` cannot be read (`cannot read the file: <kind>`), has no PEM certificate, or has a certificate that is not valid; exit code 2 without the usage.";
        ENVIRONMENT_VARIABLE_HEADER_ENV_NOT [Vscode Err]
            "the environment variable <var> of --header-env is not set, or it is empty"
            "The variable of `--header-env` has no value; exit code 2 without the usage. Set it in the `env` of the server entry.";
        ENVIRONMENT_VARIABLE_HEADER_ENV_NOT_2 [Vscode Err]
            "the environment variable <var> of --header-env is not valid: the value is not a valid HTTP header value"
            "The value has a control character or a character that is not ASCII; exit code 2 without the usage. The line never shows the value.";
        VALUE_HEADER_COMMAND_LINE_VS [Vscode Warn]
            "the value of the header <name> is on the command line. VS Code writes the command line to its log, and the process list shows it: give a secret with --header-env"
            "A `--header` named `Authorization`, `Cookie`, `X-API-Key` or `API-Key`. Use `--header-env` for it.";
    }
}

#[cfg(test)]
#[path = "lines_tests.rs"]
mod tests;
