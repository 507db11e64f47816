#!/usr/bin/env bash
# M5: what a server author gets from crates.io builds and serves. Packages the bridge crate
# (cargo package), unpacks it into target/consumer-dep/, builds bridge/examples/consumer (an
# rmcp server that calls embed::serve_stdio, with the feature rmcp) against it into the same
# target dir, then drives it on stdio as VS Code would: initialize, tools/list, tools/call
# (add → 5), and as a client of revision 2026-07-28 (server/discover, tools/call with the _meta
# envelope: rmcp's own answers). Each run must exit 0 at the end of stdin. The packaged
# binaries themselves (the three published crates built from their .crate files alone, then
# transcripts/m1 through them) are checked once, in ci/release-check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
export CARGO_TARGET_DIR="$root/target"
echo "== consumer: cargo package"
cargo package -p mcp-bridge-vscode --allow-dirty --no-verify --quiet
dep="$root/target/consumer-dep"
rm -rf "$dep"
mkdir -p "$dep"
tar -xzf target/package/mcp-bridge-vscode-0.1.0.crate -C "$dep"
echo "== consumer: build against the package"
cd bridge/examples/consumer
# The versions of the workspace (no new download): the consumer's lock starts from its lock.
cp "$root/Cargo.lock" Cargo.lock
cargo build --quiet
bin="$CARGO_TARGET_DIR/debug/consumer"
out="$(mktemp "${TMPDIR:-/tmp}/consumer.XXXXXX")"
# The consumer's own lock is tracked: the workspace's lock stands in for it only during the build.
trap 'rm -f "$out"; git -C "$root" checkout -q -- bridge/examples/consumer/Cargo.lock' EXIT

# Prints the lines with a pause after each, so that each answer comes before the next request
# (VS Code waits for the initialize result).
drive() {
  for line in "$@"; do
    printf '%s\n' "$line"
    sleep 0.3
  done
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
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}' \
  | timeout 10 "$bin" >"$out"
expect '"id":1,"result":{"protocolVersion":"2025-11-25"' "initialize"
expect '"name":"greet"' "tools/list"
expect '"id":3,"result":{"isError":false,"content":[{"type":"text","text":"5"}]' "tools/call"

echo "== consumer: a client of revision 2026-07-28 (rmcp's own serving)"
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ci","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}'
drive \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{$meta}}" \
  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"greet\",\"arguments\":{\"name\":\"CI\"},$meta}}" \
  | timeout 10 "$bin" >"$out"
expect '"supportedVersions"' "server/discover"
expect 'Hello, CI.' "tools/call"
echo "== consumer: passed"
