#!/usr/bin/env bash
# Proposal for ci/ (the lead moves it and calls it from ci/setup.sh): installs the TypeScript
# SDK v1 at the version pinned in bridge/tests/interop/package-lock.json, for the interop
# test bridge/tests/interop_ts.rs. Idempotent; needs node >= 18 and the npm registry.
set -euo pipefail
cd "$(dirname "$0")/../tests/interop"
if ! command -v npm >/dev/null; then
  echo "install-ts-sdk: npm is missing; the interop test will say that it skipped" >&2
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
