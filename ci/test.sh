#!/usr/bin/env bash
# The test command of the README: format, lints, a check for Windows, every test of the
# workspace, then every transcript. One debug build serves all steps.
set -euo pipefail
cd "$(dirname "$0")/.."
spec="${MCP_SPEC_DIR:-../shared/spec}"
echo "== rustfmt"
cargo fmt --all -- --check
echo "== clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
# The bridge must compile for Windows (a job object in place of the process group). The target's
# standard library comes from rustup; where it cannot be fetched, the step says that it skipped.
if rustup target add x86_64-pc-windows-gnu >/dev/null 2>&1; then
  echo "== check for Windows"
  cargo check -p mcp-bridge-vscode --target x86_64-pc-windows-gnu --locked
else
  echo "== check for Windows: skipped (rustup cannot add the target x86_64-pc-windows-gnu)"
fi
echo "== build"
cargo build --workspace --all-targets --locked
echo "== tests"
cargo test --workspace --locked
echo "== transcripts"
if [ -d "$spec" ]; then
  target/debug/harness --schemas "$spec" transcripts/
else
  target/debug/harness transcripts/
fi
