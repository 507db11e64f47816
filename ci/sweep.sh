#!/usr/bin/env bash
# The secret sweep (issue 14): every stderr that the process tests and the transcripts kept in
# $MCP_STDERR_DIR (bridge/tests/it/support and the harness write one file per bridge) is searched for the
# secrets that the tests planted (ci/planted-secrets.txt, one fixed string a line). Zero hits,
# and at least one file searched, or the run fails.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${MCP_STDERR_DIR:?MCP_STDERR_DIR names the folder of the kept stderr}"
files=$(find "$dir" -type f -name '*.stderr' | wc -l)
if [ "$files" -eq 0 ]; then
  echo "sweep: no stderr was kept in $dir" >&2
  exit 1
fi
bytes=$(cat "$dir"/*.stderr | wc -c)
patterns=$(grep -v '^#' ci/planted-secrets.txt | grep -v '^$')
if hits=$(grep -F -l -e "$(printf '%s' "$patterns")" "$dir"/*.stderr); then
  echo "sweep: a planted secret is on stderr in:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "sweep: $(echo "$patterns" | wc -l) planted secrets, $files stderr files ($bytes bytes): 0 hits"
