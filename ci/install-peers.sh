#!/usr/bin/env bash
# Installs the real third-party MCP peers of the interop tests at pinned versions:
# the TypeScript SDK v1 client and the TypeScript SDK v2 server (M3 upstream), both pinned in
# bridge/tests/interop/package-lock.json. Needs Node.js >= 20;
# installs Debian's nodejs and npm when the machine has none. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  echo "install-peers: installing nodejs and npm from Debian" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
(cd bridge/tests/interop && npm ci --no-audit --no-fund --loglevel=error)
