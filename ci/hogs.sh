#!/usr/bin/env bash
# The load of the repeat scripts (ci/repeat-transcripts.sh, ci/repeat-tests.sh), the same as
# ci/contention.sh's: one stress-ng CPU hog per core, ended when the sourcing script exits.
# Source it: `. ci/hogs.sh LIMIT_SECONDS`; HOGS=0 runs without the hogs (a quiet run).
# It sets `hog_pid` and prints one line: the cores and the load average when the hogs start.
start_hogs() {
  local limit="$1" cores
  cores="$(nproc)"
  if [ "${HOGS:-1}" = 0 ]; then
    echo "== hogs: none (HOGS=0); nproc $cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    return 0
  fi
  command -v stress-ng >/dev/null || { echo "ci/hogs.sh: stress-ng is missing (ci/setup.sh installs it)" >&2; return 1; }
  stress-ng --cpu "$cores" --timeout "${limit}s" --quiet &
  hog_pid=$!
  trap 'kill "$hog_pid" 2>/dev/null || true; wait "$hog_pid" 2>/dev/null || true' EXIT
  echo "== hogs: $cores CPU hogs (stress-ng pid $hog_pid, at most $limit s); nproc $cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
}
