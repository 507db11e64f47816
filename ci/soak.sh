#!/usr/bin/env bash
# The soak: `ci/soak.sh [minutes]` (default 2) runs four bridges side by side against the
# fixture with a mixed workload (harness/src/soak: the command form with its upstream killed
# once a minute, the URL form with its sign-in and token refreshes, the embedded bridge, the
# Copilot profile) and fails on a lost or doubled answer, a stdout line that is not JSON-RPC,
# an orphan process, a secret on stderr or a bridge whose anonymous PSS grows by more than
# SOAK_PSS_GROWTH_KIB (default 5120). It uses the debug build of ci/test.sh (the same command,
# so that it is a no-op there: building fewer packages would unify other features and rebuild).
set -euo pipefail
cd "$(dirname "$0")/.."
minutes="${1:-2}"
cargo build --workspace --all-targets --locked
# The bound of the run: the soak itself, plus the last stops (the watchdog's 8 s) and a margin.
limit="$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 + 120 }')"
timeout --kill-after=10 "$limit" \
  target/debug/harness soak --minutes "$minutes" --pss-growth-kib "${SOAK_PSS_GROWTH_KIB:-5120}"
