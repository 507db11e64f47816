//! `harness`: replays JSONL transcripts against the bridge (see `transcripts/README.md`).
fn main() -> std::process::ExitCode {
    harness::cli::main()
}
