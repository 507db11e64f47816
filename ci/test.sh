#!/usr/bin/env bash
# The test command of the README: format, lints, every test of the workspace, then every
# transcript. One debug build serves all steps.
set -euo pipefail
cd "$(dirname "$0")/.."
spec="${MCP_SPEC_DIR:-../shared/spec}"
echo "== rustfmt"
cargo fmt --all -- --check
echo "== clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== build"
cargo build --workspace --all-targets --locked
echo "== tests"
cargo test --workspace --locked
if [ -x target/debug/harness ] && ls transcripts/*/*.jsonl >/dev/null 2>&1; then
  echo "== transcripts"
  if [ -d "$spec" ]; then
    target/debug/harness --schemas "$spec" transcripts/
  else
    target/debug/harness transcripts/
  fi
fi
