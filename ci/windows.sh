#!/usr/bin/env bash
# The Windows step (docs/windows.md): the Windows bridge and fixture, built once for
# x86_64-pc-windows-gnu (debug), replay the command-form transcripts under wine, then the
# Windows process tests run (the stop sequence, the Credential Manager store, the sign-in).
#
# Installs nothing (ci/setup.sh does). The wine prefix is this run's own, in a temporary folder,
# without a display; it gets bcryptprimitives.dll built from ci/windows/processprng.c, because
# wine 8.0 lacks that DLL and every Rust program since 1.78 imports ProcessPrng from it. The
# script ends the prefix's wineserver (and with it every process of the prefix) on every exit.
#
# Usage: ci/windows.sh [harness options…]  (e.g. --filter A24 --verbose)
set -euo pipefail
cd "$(dirname "$0")/.."
step_started=$SECONDS
spec="${MCP_SPEC_DIR:-../shared/spec}"
target=x86_64-pc-windows-gnu
for tool in wine wineboot wineserver x86_64-w64-mingw32-gcc; do
  command -v "$tool" >/dev/null || { echo "ci/windows.sh: $tool is missing (ci/setup.sh installs it)" >&2; exit 1; }
done

# The same command form as the Windows release archive (ci/release.sh), so cargo reuses this
# build: the bridge, the fixture, and the harness (on Windows only the relay of the scripted
# upstream and of the tap; the runner stays the Linux harness).
echo "== Windows: build (bridge, fixture and harness, $target)"
cargo build --locked --workspace --bins --target "$target"
# The lib's unit tests for Windows, for the unit tests below (run under wine).
cargo test --locked --no-run -p mcp-bridge-vscode --lib --target "$target"
win="$PWD/target/$target/debug"

work="$(mktemp -d "${TMPDIR:-/tmp}/mcp-windows.XXXXXX")"
export WINEPREFIX="$work/prefix"
# No debug channels, no display (wine runs console programs without one), and no prompt to
# install wine's Mono or Gecko into the prefix.
export WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY WAYLAND_DISPLAY
cleanup() {
  local status=$?
  wineserver -k >/dev/null 2>&1 || true
  wineserver -w >/dev/null 2>&1 || true
  rm -rf "$work"
  echo "== Windows: $((SECONDS - step_started)) s in all"
  exit "$status"
}
trap cleanup EXIT

echo "== Windows: wine prefix"
wine_started=$SECONDS
wineboot -i >"$work/wineboot.log" 2>&1 || { cat "$work/wineboot.log" >&2; exit 1; }
# Only where this wine has no such DLL (wineboot puts a stub of every built-in DLL into
# system32): a wine that has its own keeps it, and no other program of the prefix loses it.
prng_dll="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -e "$prng_dll" ]; then
  x86_64-w64-mingw32-gcc -O2 -s -shared -o "$prng_dll" ci/windows/processprng.c -ladvapi32
fi
# The Windows programs of the process tests: the fixture, and an upstream that ignores the end
# of its stdin and starts a child (bridge/tests/it/windows_stop.rs).
mkdir -p "$work/tools"
cp "$win/bridge-fixture-server.exe" "$work/tools/"
x86_64-w64-mingw32-gcc -O2 -s -o "$work/tools/stubborn-upstream.exe" ci/windows/stubborn.c
# After the wineserver of wineboot ended, a persistent one started here, outside every transcript: the harness counts the
# processes that carry a transcript's tag as its tree, and a wineserver started by a bridge
# would carry it and outlive the transcript.
wineserver -w
wineserver -p
# A process of the prefix that lives as long as the step: with it wine's own services start
# once, here, and not inside (and tagged as part of) the first transcript's tree. It reads a
# FIFO whose writing end this script holds; cleanup ends it with the prefix.
mkfifo "$work/keep"
wine cmd.exe <"$work/keep" >/dev/null 2>&1 &
exec 9>"$work/keep"
# The wrapper that stands for the Windows bridge: the harness and the tests start it as they
# would start the bridge itself.
cat >"$work/mcp-bridge-vscode" <<WRAP
#!/bin/sh
exec wine "$win/mcp-bridge-vscode.exe" "\$@"
WRAP
chmod +x "$work/mcp-bridge-vscode"
version="$("$work/mcp-bridge-vscode" --version </dev/null)"
echo "== Windows: $version runs under $(wine --version) ($((SECONDS - wine_started)) s for the prefix)"

echo "== Windows: transcripts of the command form through the Windows bridge (both profiles)"
schemas=()
[ -d "$spec" ] && schemas=(--schemas "$spec")
replay_started=$SECONDS
# The relay runs under wine, started by the Windows bridge: loopback TCP in place of a Unix
# socket.
replay_windows() {
  MCP_BRIDGE_BIN="$work/mcp-bridge-vscode" BRIDGE_FIXTURE_SERVER="$win/bridge-fixture-server.exe" \
    HARNESS_RELAY_BIN="$win/harness.exe" HARNESS_RELAY=tcp \
    target/debug/harness "${schemas[@]}" --no-build --windows "$@"
}
# A failure fails the step, except one of wine's own failures to start a Windows program,
# each named by its line on the bridge's stderr: wine 8.0 answering CreateProcess with
# "Internal error" (os error 1359) under load, or a new process that cannot map its shared
# user data (c0000018). Such a transcript runs once more, named in the output. The SIGSEGV or
# SIGKILL of the bridge at its exit (wine's race of threads ending while the process ends) is
# gone since the bridge ends without stopping its threads (docs/windows.md, "The end of the
# process"): it is a failure like any other.
# A wine process of the bridge that ends by a POSIX signal was ended by wine itself: the
# Windows program has no such signals, and the transcripts that send one are skipped here.
# So was one that ends with a code but without a line on stderr: the bridge writes a line
# before each exit code other than 0. The harness's report names either end in its line
# "the bridge ended with …", after reading stderr to its end.
wine_start_failure='os error 1359|failed to map the shared user data|^  the bridge ended with (signal [0-9]+|code [1-9][0-9]*, with nothing on stderr)$'
if ! replay_windows "$@" transcripts/m1 transcripts/m2 transcripts/m3 transcripts/scenarios transcripts/older-upstream \
  | tee "$work/replay.log"; then
  # Each failed transcript once, by its path: a transcript of both eras is named with its era
  # (`path [2025-11-25]`), and a replay of the path plays both.
  mapfile -t failed < <(sed -n '/^failed transcripts:/,/^schema checks/p' "$work/replay.log" \
    | sed -n 's/^  \(transcripts\/[^ ]*\.jsonl\)\( \[[^]]*\]\)\{0,1\}$/\1/p' | sort -u)
  [ "${#failed[@]}" -gt 0 ] || { echo "== Windows: the replay failed, and its report names no transcript" >&2; exit 1; }
  # The transcripts whose report (from its "FAIL <path>" line to the next) names a failure
  # of wine to start a program.
  mapfile -t of_wine < <(awk -v pattern="$wine_start_failure" '
    /^FAIL / { current = $2 }
    current != "" && $0 ~ pattern { print current; current = "" }' "$work/replay.log")
  for path in "${failed[@]}"; do
    printf '%s\n' "${of_wine[@]}" | grep -qxF "$path" || {
      echo "== Windows: $path failed, not because wine could not start a program" >&2
      exit 1
    }
  done
  echo "== Windows: ${#failed[@]} transcript(s) failed as wine could not start a program; once more: ${failed[*]}"
  replay_windows "$@" "${failed[@]}"
fi
echo "== Windows: transcripts in $((SECONDS - replay_started)) s"

echo "== Windows: process tests under wine (stop sequence, Credential Manager, sign-in)"
# `--workspace`: the Linux build of ci/test.sh serves (see ci/keychain-tests.sh).
tests_started=$SECONDS
MCP_WINE_BRIDGE="$work/mcp-bridge-vscode" MCP_WINE_TOOLS="$work/tools" \
  cargo test --locked --no-fail-fast --workspace --test it -- --test-threads 1 --nocapture "${MCP_WINE_TESTS:-under_wine_}"
echo "== Windows: process tests in $((SECONDS - tests_started)) s"

# The lib's unit tests for Windows: the watchdog (no input of the executable holds its stop on
# Windows past 8 s, so the test provokes it with a longer grace:
# bridge/src/front/watchdog_windows_tests.rs) and the DACL of the file store's token directory
# (bridge/src/auth/store/private_windows_tests.rs).
echo "== Windows: the watchdog and the token directory's DACL under wine (the lib's unit tests for Windows)"
watchdog_started=$SECONDS
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine MCP_WINE_TOOLS="$work/tools" \
  cargo test --locked -p mcp-bridge-vscode --lib --target "$target" -- --test-threads 1 \
  front::watchdog_windows_tests auth::store::file::private_windows
echo "== Windows: the lib's unit tests in $((SECONDS - watchdog_started)) s"
