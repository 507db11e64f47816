#!/usr/bin/env bash
# The hunt for transcripts that fail by chance (docs/ci.md, "The hunt"): N shuffled, jittered
# passes over the transcripts (`harness --repeat N --jitter SEED`) beside one CPU hog per core
# (ci/hogs.sh), in one replay mode of CI. The harness prints the cores and the load average
# with each pass and with the report, which groups the failures by signature, each with its
# first diff and the seed that replays it.
#
# Usage: bash ci/repeat-transcripts.sh N [harness options…]
#   e.g. bash ci/repeat-transcripts.sh 30                 (the command form)
#        bash ci/repeat-transcripts.sh 30 --embedded      (the embedded bridge)
#        MCP_BRIDGE_BIN=… BRIDGE_FIXTURE_SERVER=… bash ci/repeat-transcripts.sh 30   (shipped binaries)
# JITTER_SEED fixes the seed (pass p uses SEED + p - 1); without it a fresh one is printed.
# HOGS=0 runs without the hogs. HARNESS names another harness binary (its bridge and fixture
# are those beside it); the default is the build of ci/test.sh, target/debug/harness.
set -euo pipefail
cd "$(dirname "$0")/.."
passes="${1:?usage: bash ci/repeat-transcripts.sh N [harness options…]}"
shift
spec="${MCP_SPEC_DIR:-../shared/spec}"
# A pass takes about a minute on 2 busy cores; the hogs outlive no run.
. ci/hogs.sh
start_hogs "$((passes * 600 + 60))"
schemas=()
if [ -d "$spec" ]; then schemas=(--schemas "$spec"); fi
"${HARNESS:-target/debug/harness}" "${schemas[@]}" --repeat "$passes" --jitter "${JITTER_SEED:-random}" "$@" transcripts/
