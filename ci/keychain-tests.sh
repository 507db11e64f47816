#!/usr/bin/env bash
# The keychain tests (bridge/src/auth/store/keychain_tests.rs, then bridge/tests/it/logout_index.rs
# and bridge/tests/it/keychain.rs) against a real Secret Service: Debian's
# gnome-keyring in a D-Bus session of its own (dbus-run-session), with a login collection that
# a known test password unlocks, in a temporary HOME, and without a display (so the bridge must
# never ask for an unlock prompt). ci/setup.sh installs gnome-keyring and dbus; ci/test.sh calls
# this script after the tests of the workspace. Where they are missing, the script says so and
# fails under CI (CI set to anything but empty, 0 or false).
set -euo pipefail
cd "$(dirname "$0")/.."
in_ci() { case "${CI:-}" in "" | 0 | false) return 1 ;; *) return 0 ;; esac; }
missing=""
for tool in dbus-run-session gnome-keyring-daemon; do
  command -v "$tool" >/dev/null || missing="$missing $tool"
done
if [ -n "$missing" ]; then
  if in_ci; then
    echo "ci/keychain-tests.sh: no Secret Service here (missing:$missing; bash ci/setup.sh installs them): under CI a failure, not a skip" >&2
    exit 1
  fi
  line="SKIPPED: ci/keychain-tests.sh: the keychain tests (no Secret Service here, missing:$missing)"
  echo "$line" >&2
  if [ -n "${MCP_SKIP_LOG:-}" ]; then echo "$line" >>"$MCP_SKIP_LOG"; fi
  exit 0
fi
home="$(mktemp -d "${TMPDIR:-/tmp}/mcp-keychain.XXXXXX")"
trap 'rm -rf "$home"' EXIT
# The build is outside the session, so that the session only runs the test. `--workspace`, not
# `-p`: the feature set of ci/test.sh's build, which cargo then reuses (a `-p` build resolves
# the dependencies' features anew and compiles about 50 of them again).
cargo test --workspace --locked --lib --test it --no-run
# The session has a HOME of its own (for the keyring files); cargo and rustup keep theirs.
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
MCP_KEYCHAIN_SESSION=1 dbus-run-session -- bash -c '
  set -euo pipefail
  export HOME="$1" XDG_DATA_HOME="$1/data" XDG_CACHE_HOME="$1/cache"
  unset DISPLAY WAYLAND_DISPLAY
  # Makes the login collection with this password, unlocks it, and names it the default.
  eval "$(printf %s mcp-keychain-test | gnome-keyring-daemon --unlock --components=secrets)"
  # The store (a unit test), then logout, then the executable, whose last step locks the
  # collection.
  cargo test --workspace --locked --lib -- --nocapture --exact auth::store::keychain_tests::the_keychain_store_against_the_secret_service
  cargo test --workspace --locked --test it -- --nocapture --exact logout_index::logout_removes_the_sign_in_from_the_index_of_the_keychain
  cargo test --workspace --locked --test it -- --nocapture --exact keychain::the_keychain_store_through_the_executable
' keychain-tests "$home" 2> >(grep -v "Failed to set fd limit" >&2)
# The keychain holds the sign-in by design; its files on disk must not (the collection is
# encrypted with its password): the secret sweep (ci/sweep.sh) reads a copy of them.
if [ -n "${MCP_STDERR_DIR:-}" ] && [ -d "$home/data/keyrings" ]; then
  cp -r "$home/data/keyrings" "$MCP_STDERR_DIR/keyring-$$"
fi
