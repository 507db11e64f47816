//! The selection of the path by the first message (bridge/README.md, "Embedding the bridge in
//! an rmcp server"): [`classify`] is the pure rule for one line, [`step`] adds the policy for
//! `server/discover`, and [`FirstLines`] reads lines until one selects a path, keeping the
//! bytes that it read so that the path gets them unchanged.

use std::io;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::wire::parse::{self, Message, Parsed};

/// What one line asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A request named exactly `initialize`: the bridge (the legacy path).
    Initialize,
    /// A request named exactly `server/discover`, with its id: selects no path.
    Discover(Value),
    /// Any other message, or a line that is not valid JSON-RPC: the server's own transport.
    Other,
    /// Spaces and tabs only: skipped.
    Blank,
}

/// Sorts one line (without its `\n`; one trailing `\r` is ignored). Validity is the core's
/// rule ([`parse::parse_line`]): a notification named `initialize`, a response, a batch, a
/// bad id, invalid UTF-8 or a line deeper than the limit are all [`Kind::Other`].
pub fn classify(line: &[u8]) -> Kind {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(|b| *b == b' ' || *b == b'\t') {
        return Kind::Blank;
    }
    match parse::parse_line(line) {
        Parsed::Message(Message::Request { method, .. }) if method == "initialize" => {
            Kind::Initialize
        }
        Parsed::Message(Message::Request { id, method, .. }) if method == "server/discover" => {
            Kind::Discover(id)
        }
        _ => Kind::Other,
    }
}

/// Who answers a `server/discover` that comes before the first other request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Discover {
    /// The server answers it (its own discover result); a client that can use it then takes
    /// the server's own path.
    #[default]
    Answer,
    /// The bridge answers -32601, so that a client that tries discover first (the Copilot
    /// harness) falls back to `initialize` and gets the bridge. A client of revision
    /// 2026-07-28 that needs a discover result then cannot use the server.
    Refuse,
}

/// The path of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// The bridge in front of the server in the same process (VS Code's `initialize`).
    Bridge,
    /// The server's own stdio transport, without the bridge.
    Server,
}

/// What to do with one line before a path is selected.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// The line selects this path; the path gets it unchanged.
    Select(Path),
    /// Forward the line to the server, which answers it; the next line decides.
    Forward,
    /// Answer -32601 to the request with this id; the next line decides.
    Refuse(Value),
    /// Drop the line (blank).
    Skip,
}

/// The rule of one line under the discover policy.
pub fn step(kind: Kind, discover: Discover) -> Step {
    match (kind, discover) {
        (Kind::Initialize, _) => Step::Select(Path::Bridge),
        (Kind::Other, _) => Step::Select(Path::Server),
        (Kind::Discover(_), Discover::Answer) => Step::Forward,
        (Kind::Discover(id), Discover::Refuse) => Step::Refuse(id),
        (Kind::Blank, _) => Step::Skip,
    }
}

/// One read of [`FirstLines`].
#[derive(Debug, PartialEq)]
pub enum Next {
    /// A line of `len` bytes at the start of the buffer (with its `\n`, if any).
    Line { kind: Kind, len: usize },
    /// A line over the limit was dropped (its bytes are gone).
    TooLong,
    /// The end of input, with no byte left.
    Eof,
}

/// The read chunk.
const CHUNK: usize = 64 * 1024;

/// Reads the first lines, keeping every byte read and not yet consumed.
pub struct FirstLines<R> {
    input: R,
    buf: Vec<u8>,
    max: usize,
    eof: bool,
}

impl<R: AsyncRead + Unpin> FirstLines<R> {
    pub fn new(input: R, max_line_bytes: usize) -> Self {
        FirstLines {
            input,
            buf: Vec::new(),
            max: max_line_bytes,
            eof: false,
        }
    }

    /// The next line at the start of the buffer (not consumed: see [`Self::consume`]).
    pub async fn next(&mut self) -> io::Result<Next> {
        let mut searched = 0;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[searched..]) {
                let end = searched + i;
                if end > self.max {
                    self.buf.drain(..=end);
                    return Ok(Next::TooLong);
                }
                let kind = classify(&self.buf[..end]);
                return Ok(Next::Line { kind, len: end + 1 });
            }
            searched = self.buf.len();
            if self.buf.len() > self.max {
                self.buf.clear();
                self.skip_line().await?;
                return Ok(Next::TooLong);
            }
            if self.eof {
                if self.buf.is_empty() {
                    return Ok(Next::Eof);
                }
                let kind = classify(&self.buf);
                return Ok(Next::Line {
                    kind,
                    len: self.buf.len(),
                });
            }
            self.fill().await?;
        }
    }

    /// Takes the first `len` bytes of the buffer (a line that [`Self::next`] returned).
    pub fn consume(&mut self, len: usize) -> Vec<u8> {
        self.buf.drain(..len.min(self.buf.len())).collect()
    }

    /// The input and the bytes read from it and not consumed, in their order.
    pub fn into_parts(self) -> (R, Vec<u8>) {
        (self.input, self.buf)
    }

    async fn fill(&mut self) -> io::Result<()> {
        self.buf.reserve(CHUNK);
        if self.input.read_buf(&mut self.buf).await? == 0 {
            self.eof = true;
        }
        Ok(())
    }

    /// Drops bytes up to the next `\n` (kept: what follows it), without keeping the line.
    async fn skip_line(&mut self) -> io::Result<()> {
        while !self.eof {
            self.fill().await?;
            if let Some(i) = memchr::memchr(b'\n', &self.buf) {
                self.buf.drain(..=i);
                return Ok(());
            }
            self.buf.clear();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(line: &str) -> Kind {
        classify(line.as_bytes())
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"Visual Studio Code","version":"1.140.0"}}}"#;
    const DISCOVER: &str = r#"{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{}}"#;
    const MODERN: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;

    #[test]
    fn a_request_named_exactly_initialize_selects_the_bridge() {
        assert_eq!(kind(INIT), Kind::Initialize);
        assert_eq!(kind(&format!("{INIT}\r")), Kind::Initialize);
        assert_eq!(
            kind(r#"{"method":"initialize","id":"x","jsonrpc":"2.0"}"#),
            Kind::Initialize
        );
        assert_eq!(
            step(kind(INIT), Discover::Refuse),
            Step::Select(Path::Bridge)
        );
        assert_eq!(
            step(kind(INIT), Discover::Answer),
            Step::Select(Path::Bridge)
        );
    }

    #[test]
    fn discover_selects_no_path_and_each_policy_says_who_answers() {
        assert_eq!(kind(DISCOVER), Kind::Discover(json!("d")));
        assert_eq!(step(kind(DISCOVER), Discover::Answer), Step::Forward);
        assert_eq!(
            step(kind(DISCOVER), Discover::Refuse),
            Step::Refuse(json!("d"))
        );
        assert_eq!(Discover::default(), Discover::Answer);
        // A notification named server/discover is some other message.
        assert_eq!(
            kind(r#"{"jsonrpc":"2.0","method":"server/discover"}"#),
            Kind::Other
        );
    }

    #[test]
    fn a_modern_request_a_notification_and_a_response_select_the_server() {
        for line in [
            MODERN,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            // A notification named initialize is not a request.
            r#"{"jsonrpc":"2.0","method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"Initialize"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize "}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover/"}"#,
        ] {
            assert_eq!(kind(line), Kind::Other, "{line}");
            assert_eq!(
                step(kind(line), Discover::Answer),
                Step::Select(Path::Server)
            );
        }
    }

    #[test]
    fn the_word_initialize_inside_a_value_is_not_initialize() {
        let line = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"initialize","arguments":{"method":"initialize"}}}"#;
        assert_eq!(kind(line), Kind::Other);
        assert_eq!(kind(r#""initialize""#), Kind::Other);
    }

    #[test]
    fn lines_that_are_not_valid_json_rpc_select_the_server() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize""#,
            r#"{"jsonrpc":"1.0","id":1,"method":"initialize"}"#,
            r#"{"id":1,"method":"initialize"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"initialize"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"initialize"}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"initialize"}]"#,
            "not json",
        ] {
            assert_eq!(kind(line), Kind::Other, "{line}");
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(kind(&deep), Kind::Other);
        assert_eq!(
            classify(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}"),
            Kind::Other
        );
    }

    #[test]
    fn a_blank_line_is_skipped() {
        assert_eq!(kind(""), Kind::Blank);
        assert_eq!(kind(" \t \r"), Kind::Blank);
        assert_eq!(step(Kind::Blank, Discover::Answer), Step::Skip);
    }

    async fn read_steps(input: &[u8], max: usize) -> (Vec<Next>, Vec<u8>) {
        let mut lines = FirstLines::new(input, max);
        let mut seen = Vec::new();
        loop {
            let next = lines.next().await.expect("read");
            match &next {
                Next::Line {
                    kind: Kind::Blank | Kind::Discover(_),
                    len,
                } => {
                    let len = *len;
                    seen.push(next);
                    lines.consume(len);
                }
                Next::TooLong => seen.push(next),
                Next::Line { .. } | Next::Eof => {
                    seen.push(next);
                    let (_, rest) = lines.into_parts();
                    return (seen, rest);
                }
            }
        }
    }

    #[tokio::test]
    async fn immediate_end_of_input_selects_nothing() {
        let (seen, rest) = read_steps(b"", 100).await;
        assert_eq!(seen, vec![Next::Eof]);
        assert!(rest.is_empty());
        let (seen, _) = read_steps(b"\n \n", 100).await;
        assert_eq!(seen.last(), Some(&Next::Eof));
    }

    #[tokio::test]
    async fn two_messages_in_one_read_are_both_handed_on_unchanged() {
        let input = format!("{INIT}\r\n{MODERN}\n");
        let (seen, rest) = read_steps(input.as_bytes(), 1024).await;
        assert_eq!(
            seen,
            vec![Next::Line {
                kind: Kind::Initialize,
                len: INIT.len() + 2
            }]
        );
        assert_eq!(rest, input.as_bytes());
    }

    #[tokio::test]
    async fn discover_and_blank_lines_are_consumed_and_the_next_line_decides() {
        let input = format!("\n{DISCOVER}\n{MODERN}");
        let (seen, rest) = read_steps(input.as_bytes(), 1024).await;
        assert_eq!(seen.len(), 3);
        assert_eq!(
            seen[2],
            Next::Line {
                kind: Kind::Other,
                len: MODERN.len()
            }
        );
        // A last line without a newline is still a line.
        assert_eq!(rest, MODERN.as_bytes());
    }

    #[tokio::test]
    async fn a_too_long_line_is_dropped_and_the_next_line_is_examined() {
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{{\"x\":\"{}\"}}}}",
            "a".repeat(300)
        );
        let input = format!("{long}\n{INIT}\n");
        let (seen, rest) = read_steps(input.as_bytes(), 250).await;
        assert_eq!(seen[0], Next::TooLong);
        assert_eq!(
            seen[1],
            Next::Line {
                kind: Kind::Initialize,
                len: INIT.len() + 1
            }
        );
        assert_eq!(rest, format!("{INIT}\n").as_bytes());
        // Longer than one read chunk, then the end of input.
        let huge = vec![b'x'; CHUNK * 3];
        let (seen, rest) = read_steps(&huge, 1000).await;
        assert_eq!(seen, vec![Next::TooLong, Next::Eof]);
        assert!(rest.is_empty());
    }

    #[tokio::test]
    async fn invalid_utf8_is_handed_to_the_server_unchanged() {
        let input = b"\xff\xfe{}\n";
        let (seen, rest) = read_steps(input, 100).await;
        assert_eq!(
            seen,
            vec![Next::Line {
                kind: Kind::Other,
                len: 5
            }]
        );
        assert_eq!(rest, input);
    }
}
