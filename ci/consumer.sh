#!/usr/bin/env bash
# M5: what a server author gets from crates.io builds and serves. ci/release-check.sh builds
# bridge/examples/consumer (an rmcp server that calls embed::serve_stdio, with the feature rmcp)
# in the workspace of the packaged crates, against the packaged bridge crate, and runs
#
#   bash ci/consumer.sh <the consumer binary>
#
# which drives it on stdio as VS Code would: initialize, tools/list, tools/call (add → 5), and
# as a client of revision 2026-07-28 (server/discover, tools/call with the _meta envelope:
# rmcp's own answers). Each run must exit 0 at the end of stdin.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 <the consumer binary>" >&2; exit 2; }
bin="$1"
out="$(mktemp "${TMPDIR:-/tmp}/consumer.XXXXXX")"
fifos="$(mktemp -d "${TMPDIR:-/tmp}/consumer-pipes.XXXXXX")"
trap 'rm -rf "$out" "$fifos"' EXIT

# Runs the consumer with the lines as its input: after each request (a line with an id) it
# waits for the answer of that id before the next line goes (VS Code waits for the initialize
# result), then closes the input; every output line goes to $out, and the consumer must end
# with 0.
drive() {
  local line id reply pid w r
  : >"$out"
  rm -f "$fifos"/in "$fifos"/out
  mkfifo "$fifos/in" "$fifos/out"
  timeout 10 "$bin" <"$fifos/in" >"$fifos/out" &
  pid=$!
  exec {w}>"$fifos/in" {r}<"$fifos/out"
  for line in "$@"; do
    printf '%s\n' "$line" >&"$w"
    id="$(sed -n 's/^{"jsonrpc":"2.0","id":\([0-9]*\),.*/\1/p' <<<"$line")"
    [ -n "$id" ] || continue
    while IFS= read -r -t 10 reply <&"$r"; do
      printf '%s\n' "$reply" >>"$out"
      case "$reply" in *"\"id\":$id,"*) break ;; esac
    done
  done
  exec {w}>&-
  cat <&"$r" >>"$out"
  exec {r}<&-
  wait "$pid" || { echo "ci/consumer.sh: the consumer ended with $?" >&2; cat "$out" >&2; exit 1; }
}
expect() {
  if ! grep -qF -- "$1" "$out"; then
    echo "ci/consumer.sh: no '$1' in the output of $2:" >&2
    cat "$out" >&2
    exit 1
  fi
}

echo "== consumer: VS Code (the bridge in the process)"
drive \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"Visual Studio Code","version":"1.140.0"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}'
expect '"id":1,"result":{"protocolVersion":"2025-11-25"' "initialize"
expect '"name":"greet"' "tools/list"
expect '"id":3,"result":{"isError":false,"content":[{"type":"text","text":"5"}]' "tools/call"

echo "== consumer: a client of revision 2026-07-28 (rmcp's own serving)"
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ci","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}'
drive \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{$meta}}" \
  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"greet\",\"arguments\":{\"name\":\"CI\"},$meta}}"
expect '"supportedVersions"' "server/discover"
expect 'Hello, CI.' "tools/call"
echo "== consumer: passed"
