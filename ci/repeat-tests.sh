#!/usr/bin/env bash
# The hunt for tests that fail by chance (docs/ci.md, "The hunt"): the `tests` step of
# ci/test.sh, the same `cargo test` command, N times beside one CPU hog per core (ci/hogs.sh).
# Each run's output is kept in REPEAT_DIR (run-<n>.txt, with the cores and the load average
# before and after it); ci/repeat_report.py then groups the failures by signature, each with its
# runs and its first panic. The exit code is 1 when any run failed.
#
# Usage: bash ci/repeat-tests.sh N      (HOGS=0 runs without the hogs; REPEAT_DIR keeps the runs)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:?usage: bash ci/repeat-tests.sh N}"
dir="${REPEAT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mcp-repeat-tests.XXXXXX")}"
mkdir -p "$dir"
# What ci/test.sh passes to its steps.
MCP_SKIP_LOG="$dir/skips.txt"
export MCP_SKIP_LOG
export MCP_STDERR_DIR="${MCP_STDERR_DIR:-$dir/kept}"
mkdir -p "$MCP_STDERR_DIR"
export BRIDGE_FIXTURE_ISSUED_SECRETS="$MCP_STDERR_DIR/issued-secrets.txt"
export MCP_FUZZ_CASES="${MCP_FUZZ_CASES:-3000}"
# The command of the `tests` step of ci/test.sh.
tests=(cargo test --workspace --locked -- --skip the_keychain_store --skip the_index_of_the_keychain --skip under_wine_)
# Built before the hogs start, so that they load the tests and not the compiler.
cargo test --workspace --locked --no-run
. ci/hogs.sh
start_hogs "$((runs * 1200 + 60))"
load() { echo "nproc $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg)"; }
for n in $(seq 1 "$runs"); do
  out="$dir/run-$n.txt"
  echo "== run $n/$runs: $(load)" | tee "$out"
  status=0
  "${tests[@]}" >>"$out" 2>&1 || status=$?
  echo "== run $n/$runs: exit $status, $(load)" | tee -a "$out"
done
echo "== the runs are in $dir"
python3 ci/repeat_report.py "$dir"
