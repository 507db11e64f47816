#!/usr/bin/env bash
# The test command of the README: format, lints, the Windows step under wine, every test of
# the workspace, then every transcript. One debug build serves all steps.
#
# Skips: a check that cannot run here (no ../shared/spec, no interop peer, no Windows target)
# writes one line "SKIPPED: <why>" to stderr and to the file of MCP_SKIP_LOG (harness/src/skip.rs,
# which the tests of every crate use); the last line of this script names every skip. Under CI (CI set
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
# No import cycle and no arrow back up in the three crates (ci/layers.py says what it checks).
echo "== layers"
python3 ci/layers.py
echo "== clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== build"
cargo build --workspace --all-targets --locked
# The secret sweep (ci/sweep.sh) searches every output that the tests and the replays (also
# under wine) keep here, and the secrets that the fixture issued (docs/harness.md).
export MCP_STDERR_DIR="${MCP_STDERR_DIR:-$(mktemp -d)}"
export BRIDGE_FIXTURE_ISSUED_SECRETS="$MCP_STDERR_DIR/issued-secrets.txt"
# The Windows bridge and fixture under wine (ci/windows.sh): the command-form transcripts and
# the Windows process tests (`under_wine_…`, which the Linux run below leaves to this step).
bash ci/windows.sh
echo "== tests"
# The fuzz targets run 3000 base cases here (bridge/README.md, "Reliability"); raise it for long runs.
export MCP_FUZZ_CASES="${MCP_FUZZ_CASES:-3000}"
# The keychain tests need the D-Bus session of ci/keychain-tests.sh (outside it they record a
# skip, which fails under CI): they run there, right after. The tests under wine run in
# ci/windows.sh.
cargo test --workspace --locked -- --skip the_keychain_store --skip the_index_of_the_keychain --skip under_wine_
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
# The release archives (ci/release.sh) in the dev profile: sums, contents, linking, every
# transcript through the Linux x86_64 archive's bridge, m1 and m2 through the aarch64 one under
# qemu-user, `cargo install` of the three crates, `cargo check` for macOS.
echo "== release archives (ci/release-check.sh)"
bash ci/release-check.sh
# The npm packages and the PyPI wheels from the staged binaries of the archives, installed with
# no registry and run as VS Code starts them, and every mcp.json entry of the README's Install.
echo "== npm and PyPI packages (ci/dist-packages.sh)"
bash ci/dist-packages.sh target/dist/stage target/dist
echo "== conformance"
bash ci/conformance.sh
echo "== soak (four bridges, 2 minutes)"
bash ci/soak.sh 2
# Last: it reads the outputs of every step above that keeps them (the soak's bridges too).
echo "== secret sweep"
bash ci/sweep.sh
