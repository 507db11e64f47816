//! The formatter of the bridge's lines: a `tracing_subscriber` layer that writes the events of
//! the bridge's scopes in the line format of R7 (docs/stderr.md), one write for each line.
//!
//! Request ids: the request tasks run inside [`request_span`]. A debug line emitted inside such
//! a span that does not name its request already ends with ` [request <id>]`, where `<id>` is
//! the JSON-RPC id of VS Code's request as JSON (`7`, `"abc"`); the innermost request span
//! applies. The debug lines of docs/stderr.md name their request (`request <id> (...)`,
//! `... of client request <id>`), so they keep their exact texts; lines of the other levels
//! get no suffix.

use std::fmt::{self, Write as _};
use std::io::Write as _;

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber, span};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::LookupSpan;

use super::{Level, Scope, enabled, format_line, threshold};

/// The name of the span of one request of VS Code (target `bridge`, level DEBUG).
pub const REQUEST_SPAN: &str = "request";

/// A debug span that carries the JSON-RPC id of a request of VS Code. Debug lines emitted
/// inside it end with ` [request <id>]`. When debug lines are disabled, the span is disabled
/// and costs nothing more than the level check.
pub fn request_span(id: &serde_json::Value) -> tracing::Span {
    tracing::debug_span!(target: "bridge", REQUEST_SPAN, id = %id)
}

/// Installs [`LineLayer`] on stderr as the global subscriber of the process. False when the
/// process has a global subscriber already (then that one receives the events).
pub fn install() -> bool {
    let subscriber = tracing_subscriber::registry().with(LineLayer::stderr());
    tracing::subscriber::set_global_default(subscriber).is_ok()
}

type Sink = Box<dyn Fn(&[u8]) + Send + Sync>;

/// Writes each event of the bridge's scopes at or above the threshold of `--log-level` as one
/// line `mcp-bridge-vscode: <scope>: <level>: <text>`. Only the message of an event is
/// written; other fields are for the subscribers of an embedding server. Events of other
/// targets (other crates) get no line: they could carry a header value.
pub struct LineLayer {
    sink: Sink,
}

impl LineLayer {
    /// The layer of the executable: each line is one `write_all` on the locked stderr, so
    /// that lines of two threads never mix.
    pub fn stderr() -> LineLayer {
        LineLayer::with_sink(|line| {
            let stderr = std::io::stderr();
            let mut lock = stderr.lock();
            let _ = lock.write_all(line);
            let _ = lock.flush();
        })
    }

    /// A layer that hands each line, with its newline, to `sink` (tests, embedding).
    pub fn with_sink(sink: impl Fn(&[u8]) + Send + Sync + 'static) -> LineLayer {
        LineLayer {
            sink: Box::new(sink),
        }
    }
}

/// The request id of a request span, kept in the span's extensions.
struct RequestId(String);

/// Collects the message of an event, or the `id` field of a request span.
struct FieldText<'a> {
    name: &'static str,
    out: &'a mut String,
}

impl Visit for FieldText<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == self.name {
            self.out.push_str(value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == self.name {
            // The Debug form of format_args! and of `%` values is their Display form.
            let _ = write!(self.out, "{value:?}");
        }
    }
}

fn ours(metadata: &Metadata<'_>) -> Option<(Scope, Level)> {
    let scope = Scope::from_target(metadata.target())?;
    let level = Level::from_tracing(*metadata.level())?;
    Some((scope, level))
}

impl<S> Layer<S> for LineLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        // `sometimes`: the threshold can change, and then `enabled` answers again.
        if ours(metadata).is_some() {
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>, _ctx: Context<'_, S>) -> bool {
        ours(metadata).is_some_and(|(_, level)| enabled(level))
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::from_level(threshold().to_tracing()))
    }

    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() != REQUEST_SPAN {
            return;
        }
        let mut text = String::new();
        attrs.record(&mut FieldText {
            name: "id",
            out: &mut text,
        });
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(RequestId(text));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let Some((scope, level)) = ours(event.metadata()) else {
            return;
        };
        if !enabled(level) {
            return;
        }
        let mut text = String::new();
        event.record(&mut FieldText {
            name: "message",
            out: &mut text,
        });
        if level == Level::Debug
            && let Some(request) = request_id(event, &ctx)
            && !names_request(&text, &request)
        {
            let _ = write!(text, " [request {request}]");
        }
        let mut line = format_line(scope, level, &text);
        line.push('\n');
        (self.sink)(line.as_bytes());
    }
}

/// True when the text names the request already (`request 7 (`, `client request 7)`).
fn names_request(text: &str, request: &str) -> bool {
    let named = format!("request {request}");
    text.match_indices(&named).any(|(at, _)| {
        !text[at + named.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.')
    })
}

/// The id of the innermost request span around the event.
fn request_id<S>(event: &Event<'_>, ctx: &Context<'_, S>) -> Option<String>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    ctx.event_scope(event)?.find_map(|span| {
        span.extensions()
            .get::<RequestId>()
            .map(|RequestId(id)| id.clone())
    })
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::log::{bridge, set_threshold, vscode, write};

    /// Runs `f` with a LineLayer into a buffer as the subscriber of this thread.
    fn lines_of(f: impl FnOnce()) -> Vec<String> {
        let out = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = Arc::clone(&out);
        let layer = LineLayer::with_sink(move |line| {
            if let Ok(mut buffer) = sink.lock() {
                buffer.extend_from_slice(line);
            }
        });
        tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), f);
        let bytes = out.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes)
            .split_inclusive('\n')
            .map(str::to_owned)
            .collect()
    }

    // One test owns the process-wide threshold, so that tests in parallel do not race.
    #[test]
    fn r7_lines_through_tracing_threshold_and_request_ids() {
        set_threshold(Level::Info);
        let lines = lines_of(|| {
            bridge(Level::Info, "initialize from Visual Studio Code 1.141.0");
            vscode(Level::Err, "the option --x is not known");
            write(
                Scope::McpStdio,
                Level::Warn,
                "stdio server exited (exit code 3)",
            );
            write(Scope::McpRouter, Level::Warn, "a\nb");
            bridge(Level::Debug, "not written at info");
            tracing::info!(target: "hyper::client", "authorization: secret");
            tracing::info!(target: "bridge", status = 401, "a direct event");
            tracing::trace!(target: "bridge", "trace has no line");
        });
        assert_eq!(
            lines,
            [
                "mcp-bridge-vscode: bridge: info: initialize from Visual Studio Code 1.141.0\n",
                "mcp-bridge-vscode: vscode: error: the option --x is not known\n",
                "mcp-bridge-vscode: mcp_stdio: warning: stdio server exited (exit code 3)\n",
                "mcp-bridge-vscode: mcp_router: warning: a b\n",
                "mcp-bridge-vscode: bridge: info: a direct event\n",
            ]
        );

        set_threshold(Level::Err);
        let lines = lines_of(|| {
            bridge(Level::Warn, "w");
            bridge(Level::Err, "e");
        });
        assert_eq!(lines, ["mcp-bridge-vscode: bridge: error: e\n"]);

        set_threshold(Level::Debug);
        let lines = lines_of(|| {
            bridge(Level::Debug, "outside");
            let outer = request_span(&serde_json::json!(7));
            let _outer = outer.enter();
            bridge(
                Level::Debug,
                "upstream request 3 (tools/call): response after 5 ms",
            );
            bridge(
                Level::Debug,
                "request 7 (tools/call): sent elicitation/create to the client as request \"b-1\"",
            );
            bridge(Level::Info, "info keeps its text");
            {
                let inner = request_span(&serde_json::json!("a\"b"));
                let _inner = inner.enter();
                tracing::debug!(target: "bridge", "inner");
            }
            bridge(Level::Debug, "back");
        });
        set_threshold(Level::Info);
        assert_eq!(
            lines,
            [
                "mcp-bridge-vscode: bridge: debug: outside\n",
                "mcp-bridge-vscode: bridge: debug: upstream request 3 (tools/call): response after 5 ms [request 7]\n",
                "mcp-bridge-vscode: bridge: debug: request 7 (tools/call): sent elicitation/create to the client as request \"b-1\"\n",
                "mcp-bridge-vscode: bridge: info: info keeps its text\n",
                "mcp-bridge-vscode: bridge: debug: inner [request \"a\\\"b\"]\n",
                "mcp-bridge-vscode: bridge: debug: back [request 7]\n",
            ]
        );
    }

    #[test]
    fn without_a_subscriber_a_request_span_is_disabled() {
        assert!(request_span(&serde_json::json!(1)).is_disabled());
    }
}
