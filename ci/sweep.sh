#!/usr/bin/env bash
# The secret sweep (docs/harness.md, "The secret sweep"): first its self-test (every planted
# value and every kind of issued secret, in every form, must be found), then every output that
# the process tests and the transcript replays kept in $MCP_STDERR_DIR is searched (ci/sweep.py
# says what it reads and matches). Arguments go to ci/sweep.py (e.g. --replay-runs 3).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${MCP_STDERR_DIR:?MCP_STDERR_DIR names the folder of the kept outputs}"
python3 ci/sweep.py --self-test
python3 ci/sweep.py "$@"
