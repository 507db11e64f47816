#!/usr/bin/env bash
# The check step of action.yml: `mcp-bridge-harness check` on the command or the URL, the
# report of INPUT_FORMAT to INPUT_REPORT, the table to the job log. Its exit code is the
# harness's: 0 nothing blocks, 1 something blocks, 2 a usage error, 3 an expected failure is gone.
#   INPUT_COMMAND | INPUT_URL, INPUT_ARGS, INPUT_EXPECTATIONS, INPUT_FORMAT, INPUT_REPORT;
#   GITHUB_STEP_SUMMARY (set by GitHub) gets the report as Markdown tables.
set -euo pipefail
harness="${MCP_BRIDGE_HARNESS_BIN:-mcp-bridge-harness}"
fail() { echo "mcp-bridge-harness action: $*" >&2; exit 2; }
# Shell words without a shell: no expansion of what the workflow gives.
words() { python3 -c 'import shlex, sys; sys.stdout.write("".join(w + "\0" for w in shlex.split(sys.argv[1])))' "$1"; }
args=(check --format "${INPUT_FORMAT:-junit}" --output "${INPUT_REPORT:-harness-check.xml}")
[ -z "${INPUT_EXPECTATIONS:-}" ] || args+=(--expectations "$INPUT_EXPECTATIONS")
# The job summary of GitHub Actions: the report as Markdown tables beside the report file.
[ -z "${GITHUB_STEP_SUMMARY:-}" ] || args+=(--summary "$GITHUB_STEP_SUMMARY")
mapfile -d '' extra < <(words "${INPUT_ARGS:-}")
args+=("${extra[@]}")
if [ -n "${INPUT_URL:-}" ] && [ -n "${INPUT_COMMAND:-}" ]; then
  fail "give command or url, not both"
elif [ -n "${INPUT_URL:-}" ]; then
  args+=("$INPUT_URL")
elif [ -n "${INPUT_COMMAND:-}" ]; then
  mapfile -d '' cmd < <(words "$INPUT_COMMAND")
  args+=(-- "${cmd[@]}")
else
  fail "give the command of the server or its URL"
fi
exec "$harness" "${args[@]}"
