//! `bench --translator <program> [args…]`: the least work a bridge of this kind does on the
//! echo path, on two blocking threads as the byte relay runs, as a floor of `--compare`: each
//! request of VS Code's revision goes to the child with a new id and the `_meta` of the
//! stateless revision, and each response comes back with VS Code's id and without
//! `resultType`. It parses each line once (serde_json, borrowing), answers `initialize` itself
//! and drops notifications: no time limit, no cancellation, no progress, no check. What the
//! bridge costs beyond it is the bridge's own rules and its runtime, not the translation.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::value::RawValue;

/// The members of a line this floor reads.
#[derive(Deserialize)]
struct Frame<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    method: Option<&'a str>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

const META: &str = concat!(
    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientInfo":{"name":"Visual Studio Code","version":"1.140.0"},"#,
    r#""io.modelcontextprotocol/clientCapabilities":{}}"#
);

/// VS Code's ids of the requests in flight, by the id sent upstream.
type Ids = Arc<Mutex<HashMap<u64, Box<RawValue>>>>;

pub(crate) fn translator(program: &str, args: &[String]) {
    let mut child = super::spawn_piped(program.as_ref(), args);
    let mut to_child = child.stdin.take().expect("stdin");
    let from_child = child.stdout.take().expect("stdout");
    let ids: Ids = Arc::default();
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let (ids_back, out_back) = (ids.clone(), out.clone());
    std::thread::spawn(move || responses(from_child, &ids_back, &out_back));
    let mut lines = BufReader::with_capacity(256 * 1024, std::io::stdin().lock());
    let (mut line, mut frame, mut next) = (Vec::new(), Vec::new(), 0u64);
    while lines.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
        if let Ok(Frame {
            id: Some(id),
            method: Some(method),
            params,
            ..
        }) = serde_json::from_slice(&line)
        {
            frame.clear();
            if method == "initialize" {
                let result = r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"translator","version":"1"}}"#;
                write_frame(
                    &out,
                    &[
                        br#"{"jsonrpc":"2.0","id":"#,
                        id.get().as_bytes(),
                        br#","result":"#,
                        result.as_bytes(),
                        b"}\n",
                    ],
                );
            } else {
                next += 1;
                let upstream_id = next.to_string();
                ids.lock().expect("ids").insert(next, id.to_owned());
                let params = params.map_or("{}", |p| p.get()).trim_end();
                let inner = params.strip_suffix('}').unwrap_or("{");
                let comma: &[u8] = if inner.trim_end() == "{" { b"" } else { b"," };
                let parts: [&[u8]; 9] = [
                    br#"{"jsonrpc":"2.0","id":"#,
                    upstream_id.as_bytes(),
                    br#","method":""#,
                    method.as_bytes(),
                    br#"","params":"#,
                    inner.as_bytes(),
                    comma,
                    META.as_bytes(),
                    b"}}\n",
                ];
                for part in parts {
                    frame.extend_from_slice(part);
                }
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

/// The child's responses, back to stdout with VS Code's ids.
fn responses(from_child: std::process::ChildStdout, ids: &Ids, out: &Mutex<std::io::Stdout>) {
    let mut lines = BufReader::with_capacity(256 * 1024, from_child);
    let mut line = Vec::new();
    while lines.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
        if let Ok(Frame {
            id: Some(id),
            method: None,
            result,
            error,
            ..
        }) = serde_json::from_slice(&line)
        {
            let theirs = id.get().parse::<u64>().ok();
            if let Some(ours) = theirs.and_then(|n| ids.lock().expect("ids").remove(&n)) {
                let body = match (result, error) {
                    (Some(result), _) => {
                        let mut members: serde_json::Map<String, serde_json::Value> =
                            serde_json::from_str(result.get()).unwrap_or_default();
                        members.shift_remove("resultType");
                        format!(r#","result":{}"#, serde_json::Value::Object(members))
                    }
                    (None, Some(error)) => format!(r#","error":{}"#, error.get()),
                    (None, None) => String::new(),
                };
                write_frame(
                    out,
                    &[
                        br#"{"jsonrpc":"2.0","id":"#,
                        ours.get().as_bytes(),
                        body.as_bytes(),
                        b"}\n",
                    ],
                );
            }
        }
        line.clear();
    }
}

/// One frame to stdout, under its lock, in one write.
fn write_frame(out: &Mutex<std::io::Stdout>, parts: &[&[u8]]) {
    let frame: Vec<u8> = parts.concat();
    let mut out = out.lock().expect("stdout");
    let _ = out.write_all(&frame).and_then(|()| out.flush());
}
