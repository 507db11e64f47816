#!/usr/bin/env bash
# The secret sweep (docs/harness.md, "The secret sweep"): first its self-tests, then every
# output that the process tests and the transcript replays kept in $MCP_STDERR_DIR is searched
# (ci/sweep.py says what it reads and matches). Arguments go to ci/sweep.py (--replay-runs N).
#
# The self-tests: every planted value and every kind of issued secret, in every form, must be
# found, once in memory in each kind of output, once printed on purpose on the bridge's stdout
# by transcripts of the fixture's `echo` that the real harness replays into a folder of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${MCP_STDERR_DIR:?MCP_STDERR_DIR names the folder of the kept outputs}"
spec="${MCP_SPEC_DIR:-../shared/spec}"
python3 ci/sweep.py --self-test
plant="$(mktemp -d "${TMPDIR:-/tmp}/mcp-sweep-plant.XXXXXX")"
trap 'rm -rf "$plant"' EXIT
python3 ci/sweep.py --plant-transcripts "$plant"
schemas=()
if [ -d "$spec" ]; then schemas=(--schemas "$spec"); fi
MCP_STDERR_DIR="$plant/kept" target/debug/harness "${schemas[@]}" "$plant/transcripts" >/dev/null
python3 ci/sweep.py --dir "$plant/kept" --expect-planted
python3 ci/sweep.py "$@"
