#!/usr/bin/env bash
# The contention run: the process tests of the stop sequence (R7), the fault matrix and the
# embedded bridge once more with every core busy (a stress-ng CPU hog per core), because a
# VS Code window starts many servers at once on a busy laptop. The bounds of these tests are
# the contract's (shutdown_grace, the watchdog), so they must hold under load too.
#
# The hog is started and ended here (trap EXIT); the run is bounded by CONTENTION_LIMIT.
# Which tests run is set by the two variables below: cargo test's target arguments, and the
# test-name filters given to the test binary (the modules of bridge/tests/it; the tests under
# wine run in ci/windows.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
CONTENTION_TESTS="${CONTENTION_TESTS:---test it}"
CONTENTION_FILTERS="${CONTENTION_FILTERS:-stop:: fault_matrix:: embed:: --skip under_wine_}"
CONTENTION_LIMIT="${CONTENTION_LIMIT:-600}"
command -v stress-ng >/dev/null || { echo "ci/contention.sh: stress-ng is missing (ci/setup.sh installs it)" >&2; exit 1; }
cores="$(nproc)"
# Built before the hog starts, so that the hog loads the tests and not the compiler; with
# `--workspace`, the build of ci/test.sh serves (see ci/keychain-tests.sh).
# shellcheck disable=SC2086
cargo test --workspace --locked $CONTENTION_TESTS --no-run
stress-ng --cpu "$cores" --timeout "$((CONTENTION_LIMIT + 60))s" --quiet &
hog=$!
trap 'kill "$hog" 2>/dev/null || true; wait "$hog" 2>/dev/null || true' EXIT
echo "== contention: $cores CPU hogs (stress-ng pid $hog); cargo test $CONTENTION_TESTS -- $CONTENTION_FILTERS"
start=$SECONDS
# shellcheck disable=SC2086
timeout --kill-after=10 "$CONTENTION_LIMIT" \
  cargo test --workspace --locked $CONTENTION_TESTS -- $CONTENTION_FILTERS
echo "== contention: passed in $((SECONDS - start)) s"
