//! The floors of translation in `--compare`: the least work a bridge of this kind does on the
//! echo path, on two blocking threads as the byte relay runs. Each request of VS Code's
//! revision goes to the child with a new id and the `_meta` of the stateless revision, and each
//! response comes back with VS Code's id and without `resultType`. `initialize` is answered
//! here and notifications are dropped: no time limit, no cancellation, no progress, no check.
//! What the bridge costs beyond them is the bridge's own rules and its runtime, not the
//! translation.
//!
//! Two readings of a line, one skeleton:
//! - `bench --translator <program> [args…]` ([`translator`]): each line parsed once by
//!   serde_json (borrowing), the result's members parsed and written again;
//! - `bench --byte-translator <program> [args…]` ([`byte_translator`]): no parse at all, only
//!   the top-level members found (strings skipped with `memchr`) and spliced. It checks no
//!   syntax, so it is below what any bridge may do: the floor of translating as such.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::value::RawValue;

const META: &str = concat!(
    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientInfo":{"name":"Visual Studio Code","version":"1.140.0"},"#,
    r#""io.modelcontextprotocol/clientCapabilities":{}}"#
);

/// A request as a floor reads it: VS Code's id, the method (JSON text, quotes included) and
/// the params, each as the bytes of the line.
pub(crate) struct Request<'a> {
    pub(crate) id: &'a [u8],
    pub(crate) method: &'a [u8],
    pub(crate) params: Option<&'a [u8]>,
}

/// A response as a floor reads it: the upstream id, and its body for VS Code
/// (`,"result":{…}` without `resultType`, or `,"error":…`).
pub(crate) struct Response<'a> {
    pub(crate) id: &'a [u8],
    pub(crate) body: Vec<u8>,
}

/// How one floor reads the two kinds of line it translates.
struct Reading {
    request: fn(&[u8]) -> Option<Request<'_>>,
    response: fn(&[u8]) -> Option<Response<'_>>,
}

/// VS Code's ids of the requests in flight, by the id sent upstream.
type Ids = Arc<Mutex<HashMap<u64, Vec<u8>>>>;

/// `--translator`: serde_json reads every line.
pub(crate) fn translator(program: &str, args: &[String]) {
    serve(
        program,
        args,
        Reading {
            request: serde_request,
            response: serde_response,
        },
    );
}

/// `--byte-translator`: the top-level members are found and spliced, nothing is parsed.
pub(crate) fn byte_translator(program: &str, args: &[String]) {
    serve(
        program,
        args,
        Reading {
            request: byte_request,
            response: byte_response,
        },
    );
}

/// The skeleton of both floors: VS Code's lines on this thread, the child's on another.
fn serve(program: &str, args: &[String], reading: Reading) {
    let mut child = super::spawn_piped(program.as_ref(), args);
    let mut to_child = child.stdin.take().expect("stdin");
    let from_child = child.stdout.take().expect("stdout");
    let ids: Ids = Arc::default();
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let (ids_back, out_back) = (ids.clone(), out.clone());
    let response = reading.response;
    std::thread::spawn(move || responses(from_child, response, &ids_back, &out_back));
    let mut lines = BufReader::with_capacity(256 * 1024, std::io::stdin().lock());
    let (mut line, mut frame, mut next) = (Vec::new(), Vec::new(), 0u64);
    while lines.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
        if let Some(request) = (reading.request)(&line) {
            if request.method == br#""initialize""# {
                write_frame(&out, &initialize_frame(request.id));
            } else {
                next += 1;
                ids.lock().expect("ids").insert(next, request.id.to_vec());
                upstream_frame(next, &request, &mut frame);
                if to_child.write_all(&frame).is_err() {
                    break;
                }
            }
        }
        line.clear();
    }
    drop(to_child);
    let _ = child.wait();
}

/// The answer of a floor to `initialize`, with VS Code's `id`.
pub(crate) fn initialize_frame(id: &[u8]) -> Vec<u8> {
    let result = r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"translator","version":"1"}}"#;
    [
        br#"{"jsonrpc":"2.0","id":"#,
        id,
        br#","result":"#,
        result.as_bytes(),
        b"}\n",
    ]
    .concat()
}

/// `request` as the child gets it, with the id `upstream_id` and the stateless `_meta`, in
/// `frame` (cleared first).
pub(crate) fn upstream_frame(upstream_id: u64, request: &Request<'_>, frame: &mut Vec<u8>) {
    let upstream_id = upstream_id.to_string();
    let params = request.params.map_or(&b"{}"[..], |p| p.trim_ascii_end());
    let inner = params.strip_suffix(b"}").unwrap_or(b"{");
    let comma: &[u8] = if inner.trim_ascii_end() == b"{" {
        b""
    } else {
        b","
    };
    let parts: [&[u8]; 9] = [
        br#"{"jsonrpc":"2.0","id":"#,
        upstream_id.as_bytes(),
        br#","method":"#,
        request.method,
        br#","params":"#,
        inner,
        comma,
        META.as_bytes(),
        b"}}\n",
    ];
    frame.clear();
    for part in parts {
        frame.extend_from_slice(part);
    }
}

/// The id that a floor gave a request upstream, from the id of its response.
pub(crate) fn upstream_id(id: &[u8]) -> Option<u64> {
    std::str::from_utf8(id).ok()?.parse().ok()
}

/// A response for VS Code: its `id` and the `body` of a [`Response`].
pub(crate) fn response_frame(id: &[u8], body: &[u8]) -> Vec<u8> {
    [br#"{"jsonrpc":"2.0","id":"#, id, body, b"}\n"].concat()
}

/// The child's responses, back to stdout with VS Code's ids.
fn responses(
    from_child: std::process::ChildStdout,
    read: fn(&[u8]) -> Option<Response<'_>>,
    ids: &Ids,
    out: &Mutex<std::io::Stdout>,
) {
    let mut lines = BufReader::with_capacity(256 * 1024, from_child);
    let mut line = Vec::new();
    while lines.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
        if let Some(Response { id, body }) = read(&line)
            && let Some(ours) = upstream_id(id).and_then(|n| ids.lock().expect("ids").remove(&n))
        {
            write_frame(out, &response_frame(&ours, &body));
        }
        line.clear();
    }
}

/// One frame to stdout, under its lock, in one write.
fn write_frame(out: &Mutex<std::io::Stdout>, frame: &[u8]) {
    let mut out = out.lock().expect("stdout");
    let _ = out.write_all(frame).and_then(|()| out.flush());
}

/// The members of a line that the serde floor reads.
#[derive(Deserialize)]
struct Frame<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

fn serde_request(line: &[u8]) -> Option<Request<'_>> {
    let frame: Frame<'_> = serde_json::from_slice(line).ok()?;
    let method = frame.method?.get();
    method.starts_with('"').then_some(Request {
        id: frame.id?.get().as_bytes(),
        method: method.as_bytes(),
        params: frame.params.map(|p| p.get().as_bytes()),
    })
}

fn serde_response(line: &[u8]) -> Option<Response<'_>> {
    let frame: Frame<'_> = serde_json::from_slice(line).ok()?;
    if frame.method.is_some() {
        return None;
    }
    let body = match (frame.result, frame.error) {
        (Some(result), _) => {
            let mut members: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(result.get()).unwrap_or_default();
            members.shift_remove("resultType");
            format!(r#","result":{}"#, serde_json::Value::Object(members))
        }
        (None, Some(error)) => format!(r#","error":{}"#, error.get()),
        (None, None) => String::new(),
    };
    Some(Response {
        id: frame.id?.get().as_bytes(),
        body: body.into_bytes(),
    })
}

pub(crate) fn byte_request(line: &[u8]) -> Option<Request<'_>> {
    let (mut id, mut method, mut params) = (None, None, None);
    for (key, value) in top_members(line)? {
        match key {
            b"id" => id = Some(value),
            b"method" => method = Some(value),
            b"params" => params = Some(value),
            _ => {}
        }
    }
    Some(Request {
        id: id?,
        method: method.filter(|m| m.starts_with(b"\""))?,
        params,
    })
}

pub(crate) fn byte_response(line: &[u8]) -> Option<Response<'_>> {
    let (mut id, mut result, mut error) = (None, None, None);
    for (key, value) in top_members(line)? {
        match key {
            b"id" => id = Some(value),
            b"method" => return None,
            b"result" => result = Some(value),
            b"error" => error = Some(value),
            _ => {}
        }
    }
    let mut body = Vec::with_capacity(line.len());
    if let Some(result) = result {
        body.extend_from_slice(br#","result":{"#);
        let mut first = true;
        for (key, value) in top_members(result)? {
            if key == b"resultType" {
                continue;
            }
            if !first {
                body.push(b',');
            }
            first = false;
            body.push(b'"');
            body.extend_from_slice(key);
            body.extend_from_slice(b"\":");
            body.extend_from_slice(value);
        }
        body.push(b'}');
    } else if let Some(error) = error {
        body.extend_from_slice(br#","error":"#);
        body.extend_from_slice(error);
    }
    Some(Response { id: id?, body })
}

/// The top-level members of one JSON object (the text of a key without its quotes, the value
/// with the white space around it trimmed), found without checking the syntax: strings are
/// skipped with `memchr`, everything else byte by byte.
fn top_members(text: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    let mut members = Vec::with_capacity(6);
    let (mut depth, mut i, mut start) = (0usize, 0usize, 0usize);
    let mut key: Option<&[u8]> = None;
    while i < text.len() {
        match text[i] {
            b'"' => {
                let end = string_end(text, i + 1)?;
                if depth == 1 && key.is_none() {
                    key = Some(&text[i + 1..end - 1]);
                }
                i = end;
                continue;
            }
            b':' if depth == 1 => start = i + 1,
            b'{' | b'[' => depth += 1,
            b',' if depth == 1 => members.push((key.take()?, text[start..i].trim_ascii())),
            b'}' | b']' => {
                if depth == 1
                    && let Some(key) = key.take()
                {
                    members.push((key, text[start..i].trim_ascii()));
                }
                depth = depth.checked_sub(1)?;
            }
            _ => {}
        }
        i += 1;
    }
    Some(members)
}

/// The index after the closing quote of the string whose text begins at `from`.
fn string_end(text: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let at = from + memchr::memchr2(b'"', b'\\', text.get(from..)?)?;
        if text[at] == b'"' {
            return Some(at + 1);
        }
        from = at + 2;
    }
}
