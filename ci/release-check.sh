#!/usr/bin/env bash
# The release archives as a user gets them, checked (ci/test.sh runs this after its debug build
# and its transcripts; it needs target/debug/harness):
#   1. `bash ci/release.sh --profile dev`: the three targets' archives with the shipped linking,
#      in the fast profile (the shipped profile only adds optimisation and LTO);
#   2. `sha256sum -c SHA256SUMS`; each archive holds the three binaries, README.md and LICENSE;
#   3. what each Linux binary links (`file`, `ldd`/`readelf`): dynamic glibc, never static, no
#      symbol version newer than the 2.17 baseline;
#   4. the Linux x86_64 archive's bridge and fixture replay every transcript; the aarch64 ones,
#      under qemu-user with Debian's aarch64 glibc, replay transcripts/m1 and transcripts/m2;
#   5. `cargo install --locked --path <crate>` of the three crates from a copy of the sources
#      that is deleted before the installed bridge replays transcripts/m1 (no file of the
#      source tree is read at run time); the dev profile (--debug), sharing target/;
#   6. `cargo check` of the bridge for both macOS targets (its Keychain store and process group),
#      through cargo-zigbuild: Zig is the C compiler of ring's build script (no Apple SDK here).
# Each step prints the seconds it took. A step that cannot run here records "SKIPPED: …".
set -euo pipefail
cd "$(dirname "$0")/.."
spec="${MCP_SPEC_DIR:-../shared/spec}"
skipped() {
  echo "SKIPPED: $1" >&2
  if [ -n "${MCP_SKIP_LOG:-}" ]; then echo "SKIPPED: $1" >>"$MCP_SKIP_LOG"; fi
}
step() {
  local start=$SECONDS
  echo "== release check: $1"
  shift
  "$@"
  echo "   ($((SECONDS - start)) s)"
}
replay() {
  if [ -d "$spec" ]; then
    target/debug/harness --schemas "$spec" "$@"
  else
    target/debug/harness "$@"
  fi
}
version="$(cargo pkgid -p mcp-bridge-vscode | sed 's/.*@//')"
dist="$PWD/target/dist"
work="$(mktemp -d "${TMPDIR:-/tmp}/release-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT
bins=(mcp-bridge-vscode harness bridge-fixture-server)

build() { bash ci/release.sh --profile dev; }

# The archives, their sums and their contents; each one unpacked into $work/<target>/.
contents() {
  (cd "$dist" && sha256sum -c SHA256SUMS)
  local t name want have
  for t in x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-pc-windows-gnu; do
    name="mcp-bridge-vscode-$version-$t"
    mkdir -p "$work/$t"
    case "$t" in
      *windows*)
        python3 -m zipfile -e "$dist/$name.zip" "$work/$t"
        want="$(printf '%s\n' "${bins[@]/%/.exe}" README.md LICENSE | sort)" ;;
      *)
        tar -xzf "$dist/$name.tar.gz" -C "$work/$t"
        want="$(printf '%s\n' "${bins[@]}" README.md LICENSE | sort)" ;;
    esac
    have="$(ls "$work/$t/$name" | sort)"
    if [ "$have" != "$want" ]; then
      echo "release check: $name holds"$'\n'"$have"$'\n'"instead of"$'\n'"$want" >&2
      exit 1
    fi
    echo "$name: ${have//$'\n'/ }"
  done
}

# Dynamic glibc, never static; the newest glibc symbol version it needs is at most 2.17.
linking() {
  local t b f info newest
  for t in x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu; do
    for b in "${bins[@]}"; do
      f="$work/$t/mcp-bridge-vscode-$version-$t/$b"
      info="$(file -b "$f")"
      echo "$t/$b: $info"
      if [ "$t" = x86_64-unknown-linux-gnu ]; then ldd "$f" | sed 's/^/    /'; fi
      newest="$(readelf -V -W "$f" | grep -o 'GLIBC_2\.[0-9.]*' | sort -uV | tail -n 1 || true)"
      echo "    needs: $(readelf -d -W "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd ' ' -), newest symbol version $newest"
      case "$info" in
        *"dynamically linked"*"interpreter"*) ;;
        *) echo "release check: $t/$b is not dynamically linked against glibc" >&2; exit 1 ;;
      esac
      case "$t:$info" in
        x86_64-*:*x86-64* | aarch64-*:*aarch64*) ;;
        *) echo "release check: $t/$b is not a binary for $t" >&2; exit 1 ;;
      esac
      if ! readelf -d -W "$f" | grep -q 'NEEDED.*\[libc\.so\.6\]'; then
        echo "release check: $t/$b does not load libc.so.6" >&2
        exit 1
      fi
      if [ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -n 1)" != GLIBC_2.17 ]; then
        echo "release check: $t/$b needs $newest, newer than the 2.17 baseline" >&2
        exit 1
      fi
    done
  done
}

replay_x86_64() {
  local d="$work/x86_64-unknown-linux-gnu/mcp-bridge-vscode-$version-x86_64-unknown-linux-gnu"
  MCP_BRIDGE_BIN="$d/mcp-bridge-vscode" BRIDGE_FIXTURE_SERVER="$d/bridge-fixture-server" \
    replay transcripts/
}

# qemu-aarch64 runs each binary with Debian's aarch64 glibc as its root (-L); a two-line
# wrapper per binary stands where the harness expects an executable.
replay_aarch64() {
  local d="$work/aarch64-unknown-linux-gnu/mcp-bridge-vscode-$version-aarch64-unknown-linux-gnu"
  local sysroot=/usr/aarch64-linux-gnu b
  if ! command -v qemu-aarch64 >/dev/null || [ ! -e "$sysroot/lib/ld-linux-aarch64.so.1" ]; then
    skipped "ci/release-check.sh: the aarch64 replay (no qemu-aarch64 or no $sysroot; ci/setup.sh installs them)"
    return 0
  fi
  for b in mcp-bridge-vscode bridge-fixture-server; do
    printf '#!/bin/sh\nexec qemu-aarch64 -L %s %s "$@"\n' "$sysroot" "$d/$b" >"$work/$b-aarch64"
    chmod +x "$work/$b-aarch64"
  done
  "$work/mcp-bridge-vscode-aarch64" --version
  # qemu-user runs the child of glibc's posix_spawn (clone with CLONE_VM|CLONE_VFORK) as a plain
  # fork, so the child's failed exec never reaches the parent: a missing upstream command looks
  # like one that exits at once. That one transcript runs natively above, not here.
  local emulated=transcripts/m1/R7-spawn-failed.jsonl files
  skipped "ci/release-check.sh: $emulated under qemu-user (a failed exec of a spawned child is not reported by the emulator)"
  mapfile -t files < <(ls transcripts/m1/*.jsonl transcripts/m2/*.jsonl | grep -vxF "$emulated")
  # One transcript at a time: an emulated bridge and fixture each take a core while qemu
  # translates their code, and two side by side missed the contract's bounds on 2 loaded cores.
  MCP_BRIDGE_BIN="$work/mcp-bridge-vscode-aarch64" \
    BRIDGE_FIXTURE_SERVER="$work/bridge-fixture-server-aarch64" \
    replay --jobs 1 "${files[@]}"
}

# From a copy of the tracked sources, removed before the run: the installed binaries must not
# read files of the tree they were built from.
install() {
  local src="$work/src" root="$work/root" crate
  mkdir -p "$src"
  git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$src"
  for crate in bridge harness fixture-server; do
    CARGO_TARGET_DIR="$PWD/target" cargo install --quiet --locked --debug --path "$src/$crate" --root "$root"
  done
  rm -rf "$src"
  ls "$root/bin"
  local schemas=()
  if [ -d "$spec" ]; then schemas=(--schemas "$spec"); fi
  MCP_BRIDGE_BIN="$root/bin/mcp-bridge-vscode" BRIDGE_FIXTURE_SERVER="$root/bin/bridge-fixture-server" \
    "$root/bin/harness" "${schemas[@]}" transcripts/m1
}

# ring's build script compiles C for the target even for `cargo check`; cargo-zigbuild gives
# it Zig as the C compiler, which carries the macOS headers that the Apple SDK would (nothing
# is linked, so no SDK is needed).
macos() {
  local t
  for t in aarch64-apple-darwin x86_64-apple-darwin; do
    if ! rustup target list --installed | grep -qx "$t"; then
      skipped "ci/release-check.sh: cargo check for $t (rustup has no target $t)"
      continue
    fi
    cargo-zigbuild check --quiet --locked --target "$t" -p mcp-bridge-vscode
    echo "cargo check --target $t -p mcp-bridge-vscode: ok"
  done
}

step "archives (ci/release.sh --profile dev)" build
step "sums and contents" contents
step "linking of the Linux binaries" linking
step "every transcript through the Linux x86_64 archive's bridge and fixture" replay_x86_64
step "transcripts/m1 and m2 through the aarch64 bridge and fixture under qemu-user" replay_aarch64
step "cargo install of the three crates; transcripts/m1 through the installed binaries" install
step "cargo check for macOS" macos
