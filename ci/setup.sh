#!/usr/bin/env bash
# Installs what the tests need on a fresh machine (registries only). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "setup: cargo is missing: install Rust with rustup" >&2; exit 1; }
rustup component add rustfmt clippy >/dev/null 2>&1 || true
# Fetch the crates once, so that the build and test steps below do not race for the registry.
cargo fetch --locked
bash ci/install-peers.sh
# The Windows check of the bridge builds ring's C code for the target (rustls' crypto).
if ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
  echo "setup: installing Debian's MinGW-w64 C compiler for the Windows check" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc-mingw-w64-x86-64-posix >/dev/null
fi
# The real-browser sign-in test (bridge/tests/chromium_sign_in.rs): Debian's headless Chromium,
# and certutil to trust the test CA in the browser's NSS database.
if ! command -v chromium >/dev/null || ! command -v certutil >/dev/null; then
  echo "setup: installing Debian's chromium and libnss3-tools for the real-browser sign-in test" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium libnss3-tools >/dev/null
fi
# The keychain tests (ci/keychain-tests.sh) need a real Secret Service in a D-Bus session.
if ! command -v gnome-keyring-daemon >/dev/null || ! command -v dbus-run-session >/dev/null; then
  echo "setup: installing Debian's gnome-keyring and dbus for the keychain tests" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnome-keyring dbus >/dev/null
fi
# The contention run (ci/contention.sh) keeps every core busy with Debian's stress-ng.
if ! command -v stress-ng >/dev/null; then
  echo "setup: installing Debian's stress-ng for the contention run" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null
fi
