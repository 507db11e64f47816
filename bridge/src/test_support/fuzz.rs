//! The generators of the fuzz targets (the unit tests `fuzz_tests` of wire, translate, input,
//! listen and cli): seeded, so that a failure repeats. CI runs `DEFAULT_CASES` cases per
//! target; `MCP_FUZZ_CASES=<n>` runs n cases per target and `MCP_FUZZ_SEED=<n>` picks another
//! sequence, for long runs:
//!
//! ```sh
//! MCP_FUZZ_CASES=1000000 MCP_FUZZ_SEED=$RANDOM cargo test -p mcp-bridge-vscode --lib fuzz
//! ```

use serde_json::json;

use super::values::{Rng, value};

/// Cases per target in CI.
pub const DEFAULT_CASES: u64 = 3_000;

pub fn cases() -> u64 {
    std::env::var("MCP_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

pub fn rng(target: u64) -> Rng {
    let seed: u64 = std::env::var("MCP_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x0f22);
    Rng(seed ^ target.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

// ---------------------------------------------------------------------------------------
// Generators

/// Real messages of both sides, the seeds of the mutations.
pub fn seed_messages(rng: &mut Rng) -> Vec<u8> {
    let v = value(rng, 3);
    let id = match rng.next() % 5 {
        0 => json!(rng.next() % 1000),
        1 => json!("b-7"),
        2 => json!(null),
        3 => json!(-1.5),
        _ => json!({"x": 1}),
    };
    let frame = match rng.next() % 6 {
        0 => {
            json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"echo","arguments":v}})
        }
        1 => json!({"jsonrpc":"2.0","id":id,"result":v}),
        2 => json!({"jsonrpc":"2.0","id":id,"error":{"code":-32603,"message":"m","data":v}}),
        3 => json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}}),
        4 => json!({"method":"x","params":v,"jsonrpc":"2.0","id":id}),
        _ => v,
    };
    serde_json::to_vec(&frame).unwrap()
}

/// A mutation of a real message: flips, inserts, deletions, truncation, duplication.
pub fn mutated(rng: &mut Rng) -> Vec<u8> {
    let mut bytes = seed_messages(rng);
    const PIECES: &[&[u8]] = &[
        b"\"",
        b"\\",
        b"\\u",
        b"\\ud800",
        b"{",
        b"}",
        b"[",
        b"]",
        b",",
        b":",
        b"\"id\":",
        b"\n",
        b"\r",
        b"\0",
        b"\xff",
        b"\xc3",
        b"1e999",
        b"-0",
        b"null",
        b"\"b-",
        b"\xf0\x9f\x98",
    ];
    for _ in 0..rng.next() % 4 {
        let at = if bytes.is_empty() {
            0
        } else {
            (rng.next() as usize) % bytes.len()
        };
        match rng.next() % 5 {
            0 if !bytes.is_empty() => bytes[at] ^= 1 << (rng.next() % 8),
            1 => {
                let piece = PIECES[(rng.next() as usize) % PIECES.len()];
                bytes.splice(at..at, piece.iter().copied());
            }
            2 if !bytes.is_empty() => {
                let end = (at + 1 + (rng.next() as usize) % 8).min(bytes.len());
                bytes.drain(at..end);
            }
            3 => bytes.truncate(at),
            _ => {
                let copy = bytes[at..].to_vec();
                bytes.extend(copy);
            }
        }
    }
    bytes
}

pub fn random_bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| (rng.next() & 0xff) as u8).collect()
}

// ---------------------------------------------------------------------------------------
// Floors

/// Fails unless `seen` of the `run` cases of a target (the cases that reached a property)
/// are at least `per_mille`/1000 of them: a generator that stops reaching a property fails
/// instead of passing on nothing. The count is printed, so a long run shows its reach.
pub fn assert_floor(what: &str, seen: u64, run: u64, per_mille: u64) {
    eprintln!("fuzz: {what}: {seen} of {run} cases");
    assert!(
        seen.saturating_mul(1000) >= run.saturating_mul(per_mille),
        "fuzz: {what}: only {seen} of {run} cases, the floor is {per_mille}/1000"
    );
}
