#!/usr/bin/env bash
# Installs what the tests need on a fresh machine (registries only). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "setup: cargo is missing: install Rust with rustup" >&2; exit 1; }
rustup component add rustfmt clippy >/dev/null 2>&1 || true
# Fetch the crates once, so that the build and test steps below do not race for the registry.
cargo fetch --locked
bash ci/install-peers.sh
