#!/usr/bin/env bash
# The keychain tests (bridge/src/auth/store/keychain_tests.rs and bridge/src/secrets/keychain_tests.rs, then bridge/tests/it/logout_index.rs
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
# The bus of the session activates no service: each D-Bus session of Debian would start a
# gnome-keyring-daemon of its own for a request that reaches org.freedesktop.secrets before the
# daemon below owns the name, with the environment of the bus (the HOME of the caller, where
# no login collection is unlocked). Two Secret Services on one bus answered the tests from the
# wrong keyring ("no default collection") or went away in the middle of a call ("NoReply").
cat >"$home/session.conf" <<'CONF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF
MCP_KEYCHAIN_SESSION=1 dbus-run-session --config-file="$home/session.conf" -- bash -c '
  set -euo pipefail
  export HOME="$1" XDG_DATA_HOME="$1/data" XDG_CACHE_HOME="$1/cache"
  unset DISPLAY WAYLAND_DISPLAY
  # The daemon in the foreground, a child of this shell: it makes the login collection with
  # this password, unlocks it, names it the default, and closes its stdout once it owns its
  # names on the bus (its own sign of readiness: no poll, no sleep). Its stderr is kept.
  mkfifo "$1/keyring.out"
  printf %s mcp-keychain-test |
    gnome-keyring-daemon --foreground --unlock --components=secrets >"$1/keyring.out" 2>"$1/gnome-keyring.log" &
  keyring=$!
  daemon_log() {
    echo "ci/keychain-tests.sh: the log of gnome-keyring-daemon (pid $keyring):" >&2
    sed "s/^/  gnome-keyring: /" "$1/gnome-keyring.log" >&2
  }
  finish() {
    local status=$?
    if ! kill -0 "$keyring" 2>/dev/null; then
      echo "ci/keychain-tests.sh: gnome-keyring-daemon (pid $keyring) is gone before the end of the session" >&2
      status=1
    else
      kill "$keyring"
    fi
    if [ "$status" -ne 0 ]; then daemon_log "$1"; fi
    exit "$status"
  }
  trap "finish "$1"" EXIT
  exec 3<"$1/keyring.out"
  while :; do
    rc=0
    IFS= read -r -t 60 line <&3 || rc=$?
    if [ "$rc" -gt 128 ]; then
      echo "ci/keychain-tests.sh: gnome-keyring-daemon did not finish its start in 60 s" >&2
      exit 1
    fi
    case "$line" in GNOME_KEYRING_CONTROL=*) export "$line" ;; esac
    if [ "$rc" -ne 0 ]; then break; fi
  done
  exec 3<&-
  # The Secret Service of the session is this daemon, and no other.
  owner="$(dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets)" || owner=""
  if [ "${owner##* }" != "$keyring" ]; then
    echo "ci/keychain-tests.sh: org.freedesktop.secrets is not owned by the started gnome-keyring-daemon (pid $keyring; owner: ${owner:-none})" >&2
    exit 1
  fi
  # The store (a unit test), then logout, then the executable, whose last step locks the
  # collection.
  cargo test --workspace --locked --lib -- --nocapture --exact auth::store::keychain_tests::the_keychain_store_against_the_secret_service
  cargo test --workspace --locked --lib -- --nocapture --exact secrets::keychain_tests::the_keychain_store_keeps_secrets_apart_from_the_sign_ins
  cargo test --workspace --locked --test it -- --nocapture --exact logout_index::logout_removes_the_sign_in_from_the_index_of_the_keychain
  cargo test --workspace --locked --test it -- --nocapture --exact keychain::the_keychain_store_through_the_executable
' keychain-tests "$home" 2> >(grep -v "Failed to set fd limit" >&2)
# The keychain holds the sign-in by design; its files on disk must not (the collection is
# encrypted with its password): the secret sweep (ci/sweep.sh) reads a copy of them.
if [ -n "${MCP_STDERR_DIR:-}" ] && [ -d "$home/data/keyrings" ]; then
  cp -r "$home/data/keyrings" "$MCP_STDERR_DIR/keyring-$$"
fi
