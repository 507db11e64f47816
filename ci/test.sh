#!/usr/bin/env bash
# The test command of the README: format, lints, a check for Windows, every test of the
# workspace, then every transcript. One debug build serves all steps.
#
# Skips: a check that cannot run here (no ../shared/spec, no interop peer, no Windows target)
# writes one line "SKIPPED: <why>" to stderr and to the file of MCP_SKIP_LOG (harness/src/skip.rs,
# bridge/tests/support/skip.rs); the last line of this script names every skip. Under CI (CI set
# to anything but empty, 0 or false) a missing ../shared/spec or interop peer is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
spec="${MCP_SPEC_DIR:-../shared/spec}"
in_ci() { case "${CI:-}" in "" | 0 | false) return 1 ;; *) return 0 ;; esac; }
MCP_SKIP_LOG="$(mktemp "${TMPDIR:-/tmp}/mcp-skips.XXXXXX")"
export MCP_SKIP_LOG
summary() {
  local status=$? skips n
  skips="$(sort -u "$MCP_SKIP_LOG" | sed 's/^SKIPPED: //' | paste -sd ';' - | sed 's/;/; /g')"
  n="$(sort -u "$MCP_SKIP_LOG" | grep -c . || true)"
  rm -f "$MCP_SKIP_LOG"
  if [ "$status" -eq 0 ]; then result=passed; else result="FAILED (exit $status)"; fi
  if [ "$n" -eq 0 ]; then
    echo "== summary: $result, nothing skipped"
  else
    echo "== summary: $result, $n skipped: $skips"
  fi
}
trap summary EXIT
skipped() { echo "SKIPPED: $1" | tee -a "$MCP_SKIP_LOG" >&2; }
if [ ! -f "$spec/2026-07-28/schema/schema.json" ] || [ ! -f "$spec/2025-11-25/schema/schema.json" ]; then
  if in_ci; then
    echo "ci/test.sh: no schemas in $spec (2025-11-25/ and 2026-07-28/): under CI a failure, not a skip" >&2
    exit 1
  fi
  skipped "ci/test.sh: no schemas in $spec: the schema checks of the transcripts and tests"
fi
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
  echo "== check for Windows: skipped"
  skipped "ci/test.sh: the check for Windows (rustup cannot add the target x86_64-pc-windows-gnu)"
fi
echo "== build"
cargo build --workspace --all-targets --locked
# The secret sweep (ci/sweep.sh) searches every stderr that the tests and transcripts keep here.
export MCP_STDERR_DIR="${MCP_STDERR_DIR:-$(mktemp -d)}"
echo "== tests"
# The fuzz targets run 3000 base cases here (bridge/README.md, "Reliability"); raise it for long runs.
export MCP_FUZZ_CASES="${MCP_FUZZ_CASES:-3000}"
cargo test --workspace --locked
bash ci/keychain-tests.sh
echo "== contention (the stop, fault matrix and embedded process tests with every core busy)"
bash ci/contention.sh
echo "== consumer (M5: the packaged crate in an rmcp server)"
bash ci/consumer.sh
# Every transcript, with the schema checks where the schemas are (outside CI only without them:
# the harness records the skip itself). Arguments go to the harness before the folder.
replay() {
  if [ -d "$spec" ]; then
    target/debug/harness --schemas "$spec" "$@" transcripts/
  else
    target/debug/harness "$@" transcripts/
  fi
}
echo "== transcripts"
replay
echo "== transcripts through the embedded bridge (M5: bridge-fixture-server --embedded)"
replay --embedded
# The bridge as shipped (`cargo release-bridge`, .cargo/config.toml): on Linux with glibc the C
# library is linked in. Its debug build replays every transcript too; the fixture and the
# harness stay the ones built above.
echo "== transcripts through the bridge as shipped (cargo static-bridge)"
cargo static-bridge
host="$(rustc -vV | sed -n 's/^host: //p')"
MCP_BRIDGE_BIN="$PWD/target/$host/debug/mcp-bridge-vscode" replay
echo "== secret sweep"
bash ci/sweep.sh
echo "== conformance"
bash ci/conformance.sh
echo "== soak (four bridges, 2 minutes)"
bash ci/soak.sh 2
