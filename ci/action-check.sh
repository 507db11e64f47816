#!/usr/bin/env bash
# The GitHub Action of the repository root (action.yml) run as a script: its two steps
# (action/install.sh, action/check.sh) with the inputs as the action passes them, against the
# fixture and two servers written elsewhere: the Python SDK 1.30 FastMCP server and the
# TypeScript SDK v1 server (both installed by ci/install-peers.sh). Offline: the install step
# gets INPUT_FROM, the action's one switch (docs/harness.md, "In CI"): the local npm tarballs of
# ci/dist-packages.sh when target/dist/npm has them, else the workspace build (target/debug).
# Each report is JUnit, read by Python's XML parser.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
fail() { echo "ci/action-check.sh: $*" >&2; exit 1; }
# The steps of action.yml are exactly the two scripts run here.
for script in install check; do
  grep -q "run: bash \"\$GITHUB_ACTION_PATH/action/$script.sh\"" action.yml \
    || fail "action.yml does not run action/$script.sh"
done
[ "$(grep -c '^      run: ' action.yml)" -eq 2 ] || fail "action.yml has other run steps than the two scripts"
python="$root/target/py-peers/bin/python"
[ -x "$python" ] || fail "no Python SDK 1.30 at target/py-peers (run ci/install-peers.sh)"
[ -d bridge/tests/interop/node_modules/@modelcontextprotocol/sdk ] \
  || fail "no TypeScript SDK in bridge/tests/interop (run ci/install-peers.sh)"
shopt -s nullglob
tarballs=(target/dist/npm/mcp-bridge-vscode-*.tgz)
if [ "${#tarballs[@]}" -gt 0 ]; then
  from="$root/target/dist/npm"
else
  [ -x target/debug/mcp-bridge-harness ] || fail "no target/debug/mcp-bridge-harness (the build step)"
  from="workspace:$root/target/debug"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export RUNNER_TEMP="$work" GITHUB_ENV="$work/env" GITHUB_PATH="$work/path"
: >"$GITHUB_ENV"
echo "== action: install (INPUT_FROM=$from)"
INPUT_INSTALLER=npm INPUT_VERSION=latest INPUT_FROM="$from" bash action/install.sh
harness_bin="$(sed -n 's/^MCP_BRIDGE_HARNESS_BIN=//p' "$GITHUB_ENV" | tail -n 1)"
[ -x "$harness_bin" ] || fail "the install step named no harness in \$GITHUB_ENV"
# One check step: the expected exit code, a JUnit report that parses, its failing cases.
check() {
  local name="$1" want="$2" failing="$3" command="$4" args="${5:-}" code=0
  local report="$work/$name.xml" summary="$work/$name.md"
  echo "== action: check $name (args: ${args:-none}; exit $want expected)"
  GITHUB_STEP_SUMMARY="$summary" MCP_BRIDGE_HARNESS_BIN="$harness_bin" INPUT_COMMAND="$command" INPUT_URL="" INPUT_ARGS="$args" \
    INPUT_EXPECTATIONS="" INPUT_FORMAT=junit INPUT_REPORT="$report" bash action/check.sh \
    | awk '/^result:/ && !n { print; n = 1 }' || code=$?
  [ "$code" -eq "$want" ] || fail "$name: exit $code, expected $want"
  got="$(python3 - "$report" <<'PY'
import sys
import xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot().find("testsuite")
cases = suite.findall("testcase")
assert int(suite.get("tests")) == len(cases) > 0, "tests count"
print(",".join(c.get("name") for c in cases if c.find("failure") is not None))
PY
)"
  [ "$got" = "$failing" ] || fail "$name: failing cases '$got', expected '$failing'"
  # The job summary: the table of the clients' verdicts.
  grep -q '^| client | as it is | through the bridge |$' "$summary" \
    || fail "$name: no table of the clients in the job summary"
  echo "$name: exit $code, JUnit valid, failing: ${got:-none}"
}
check fixture 0 "" "$root/target/debug/bridge-fixture-server"
# The Copilot CLI 1.0.79-1.0.82 aborts on the -32602 of the Python SDK 1.x (1.0.102 goes on).
check python-sdk-1.30 1 discover.invalid-params "$python $root/bridge/tests/older/python_server.py" \
  "--copilot-runtime 1.0.82"
check python-sdk-1.30-expected 0 "" "$python $root/bridge/tests/older/python_server.py" \
  "--copilot-runtime 1.0.82 --expect-fail discover.invalid-params"
check typescript-sdk-v1 0 "" "node $root/bridge/tests/interop/ts-v1-server.mjs"
check typescript-sdk-v1-gone 3 discover.invalid-params "node $root/bridge/tests/interop/ts-v1-server.mjs" \
  "--profile copilot --expect-fail discover.invalid-params"
echo "== action: every check as expected"
