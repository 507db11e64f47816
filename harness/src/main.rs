//! `harness`: replays JSONL transcripts against the bridge.
fn main() {}
