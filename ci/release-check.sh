#!/usr/bin/env bash
# The release archives as a user gets them, checked (ci/test.sh runs this after its debug build
# and its transcripts; it needs target/debug/harness):
#   1. `bash ci/release.sh --profile dev`: the archives of the `here` targets of packaging/targets
#      with the shipped linking, in the fast profile (the shipped profile only adds optimisation
#      and LTO): one cross build per new architecture and libc. The cargo-zigbuild ones (step
#      `cross`) build in target/cross, a cargo folder of their own, so that ci/test.sh can start
#      them in the background beside its other steps' cargo commands; x86_64 Windows (step
#      `build`) in target/, where the Windows step of CI built it already;
#   2. `sha256sum -c SHA256SUMS`; each archive holds the three binaries, README.md and LICENSE;
#   3. what each binary is (`file`, `readelf`, the PE header): its target's machine (x86-64,
#      aarch64; PE AMD64 or ARM64 for Windows); glibc builds dynamic with no symbol version newer
#      than the 2.17 baseline, musl builds static;
#   4. the static musl x86_64 archive's bridge and fixture replay every transcript, the glibc
#      x86_64 ones transcripts/m1; the musl aarch64 ones replay transcripts/m1 and m2 under
#      qemu-user;
#   5. `cargo publish --dry-run` of the three published crates, and one build of their packaged
#      files (`cargo package`) with a server author's crate that embeds the bridge: the binaries
#      replay transcripts/m1 with the sources removed, and ci/consumer.sh drives the consumer;
#   6. `cargo check` of the bridge (where the code per platform is) for the targets that the
#      release workflow alone builds (packaging/targets, check `check`: aarch64 glibc Linux,
#      arm64 Windows, aarch64 macOS with its Keychain store), in one cargo command through
#      cargo-zigbuild: Zig is the C compiler of ring's build script (no Apple SDK or arm64
#      MinGW here);
#   7. the workflows (ci/workflows-check.sh): their lint, and release.yml's targets.
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
bins=(mcp-bridge-vscode mcp-bridge-harness bridge-fixture-server)

# The targets that ci/release.sh builds here (packaging/targets), and the folder of each
# unpacked archive; the cross-built ones (cargo-zigbuild, every Linux target) and the others.
mapfile -t targets < <(awk '!/^#/ && $2 == "here" { print $1 }' packaging/targets)
mapfile -t cross_targets < <(printf '%s\n' "${targets[@]}" | grep -- '-linux-')
mapfile -t other_targets < <(printf '%s\n' "${targets[@]}" | grep -v -- '-linux-')
# The cargo folder of the cross builds and the checks: their own (no lock shared with the
# cargo commands of target/), one for all of them (the host's build scripts and proc macros
# built once).
cross_dir="$PWD/target/cross"
cross() { CARGO_TARGET_DIR="$cross_dir" bash ci/release.sh --profile dev "${cross_targets[@]}"; }
build() { bash ci/release.sh --profile dev "${other_targets[@]}"; }
unpacked() { echo "$work/$1/mcp-bridge-vscode-$version-$1"; }

# The archives, their sums and their contents; each one unpacked into $work/<target>/.
contents() {
  (cd "$dist" && sha256sum -c SHA256SUMS)
  local t name want have
  for t in "${targets[@]}"; do
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

fail() { echo "release check: $1" >&2; exit 1; }

# glibc: dynamic, loads libc.so.6, no glibc symbol version newer than the 2.17 baseline.
glibc_linking() {
  local t="$1" b="$2" f="$3" info="$4" newest
  if [ "$t" = x86_64-unknown-linux-gnu ]; then ldd "$f" | sed 's/^/    /'; fi
  newest="$(readelf -V -W "$f" | grep -o 'GLIBC_2\.[0-9.]*' | sort -uV | tail -n 1 || true)"
  echo "    needs: $(readelf -d -W "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd ' ' -), newest symbol version $newest"
  case "$info" in
    *"dynamically linked"*"interpreter"*) ;;
    *) fail "$t/$b is not dynamically linked against glibc" ;;
  esac
  readelf -d -W "$f" | grep -q 'NEEDED.*\[libc\.so\.6\]' || fail "$t/$b does not load libc.so.6"
  if [ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -n 1)" != GLIBC_2.17 ]; then
    fail "$t/$b needs $newest, newer than the 2.17 baseline"
  fi
}

# musl: static, no loader (no PT_INTERP) and no shared library (no NEEDED).
musl_linking() {
  local t="$1" b="$2" f="$3" info="$4"
  case "$info" in
    *"static-pie linked"* | *"statically linked"*) ;;
    *) fail "$t/$b is not statically linked" ;;
  esac
  if readelf -l -W "$f" | grep -q 'INTERP' || readelf -d -W "$f" | grep -q '(NEEDED)'; then
    fail "$t/$b needs a loader or a shared library"
  fi
  echo "    static: no interpreter, no NEEDED"
}

# Windows: the PE header's machine (IMAGE_FILE_MACHINE_AMD64 0x8664, _ARM64 0xAA64).
pe_machine() {
  python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read(4096)
off = struct.unpack_from("<I", d, 0x3C)[0]
assert d[off:off + 4] == b"PE\0\0", "no PE signature"
print(hex(struct.unpack_from("<H", d, off + 4)[0]))' "$1"
}

# What each binary is: the ELF or PE machine of its target, and the linking of its libc.
linking() {
  local t b f info machine
  for t in "${targets[@]}"; do
    for b in "${bins[@]}"; do
      case "$t" in
        *windows*)
          f="$(unpacked "$t")/$b.exe"
          machine="$(pe_machine "$f")"
          echo "$t/$b.exe: $(file -b "$f"), machine $machine"
          case "$t:$machine" in
            x86_64-*:0x8664 | aarch64-*:0xaa64) ;;
            *) fail "$t/$b.exe has the PE machine $machine" ;;
          esac
          continue ;;
      esac
      f="$(unpacked "$t")/$b"
      info="$(file -b "$f")"
      echo "$t/$b: $info"
      case "$t:$info" in
        x86_64-*:*x86-64* | aarch64-*:*aarch64*) ;;
        *) fail "$t/$b is not a binary for $t" ;;
      esac
      case "$t" in
        *-gnu) glibc_linking "$t" "$b" "$f" "$info" ;;
        *-musl) musl_linking "$t" "$b" "$f" "$info" ;;
      esac
    done
  done
}

# The static musl build replays every transcript (it runs on any x86_64 Linux, so it serves
# where the glibc one did); the glibc build, the same code with another libc, replays m1.
replay_x86_64() {
  local d
  d="$(unpacked x86_64-unknown-linux-musl)"
  MCP_BRIDGE_BIN="$d/mcp-bridge-vscode" BRIDGE_FIXTURE_SERVER="$d/bridge-fixture-server" \
    replay transcripts/
  d="$(unpacked x86_64-unknown-linux-gnu)"
  MCP_BRIDGE_BIN="$d/mcp-bridge-vscode" BRIDGE_FIXTURE_SERVER="$d/bridge-fixture-server" \
    replay transcripts/m1
}

# qemu-aarch64 runs each binary of the static musl build (no loader, no root folder); a
# two-line wrapper per binary stands where the harness expects an executable.
replay_aarch64() {
  local t=aarch64-unknown-linux-musl b d
  if ! command -v qemu-aarch64 >/dev/null; then
    skipped "ci/release-check.sh: the aarch64 replay (no qemu-aarch64; ci/setup.sh installs it)"
    return 0
  fi
  # qemu-user runs the child of posix_spawn (clone with CLONE_VM|CLONE_VFORK) as a plain fork,
  # so the child's failed exec never reaches the parent: a missing upstream command looks like
  # one that exits at once. That one transcript runs natively above, not here.
  local emulated=transcripts/m1/R7-spawn-failed.jsonl files
  skipped "ci/release-check.sh: $emulated under qemu-user (a failed exec of a spawned child is not reported by the emulator)"
  mapfile -t files < <(ls transcripts/m1/*.jsonl transcripts/m2/*.jsonl | grep -vxF "$emulated")
  d="$(unpacked "$t")"
  for b in mcp-bridge-vscode bridge-fixture-server; do
    printf '#!/bin/sh\nexec qemu-aarch64 %s "$@"\n' "$d/$b" >"$work/$b-$t"
    chmod +x "$work/$b-$t"
  done
  "$work/mcp-bridge-vscode-$t" --version
  # One transcript at a time: an emulated bridge and fixture each take a core while qemu
  # translates their code, and two side by side missed the contract's bounds on 2 loaded cores.
  MCP_BRIDGE_BIN="$work/mcp-bridge-vscode-$t" BRIDGE_FIXTURE_SERVER="$work/bridge-fixture-server-$t" \
    replay --jobs 1 "${files[@]}"
}

# The published crates as crates.io gets them: `cargo publish --dry-run` of the three (its
# checks of the metadata and the versioned dependencies; --no-verify: the one build below stands
# for the three verify builds), their .crate files from `cargo package`, unpacked into one
# workspace whose crates find each other there ([patch.crates-io]), with a server author's crate
# beside them (bridge/examples/consumer: its dependency on mcp-bridge-vscode as a user writes
# it), built once from the packaged files alone; the unpacked sources are removed before the
# built binaries replay transcripts/m1 and ci/consumer.sh drives the consumer (no file of a
# source tree is read at run time). The dev profile, sharing target/. One build for both: the
# consumer built alone took about 3 minutes more of CI (226 s for the two builds, 48 s for
# the one), its dependencies built again with its own features.
packaged() {
  local crates=(-p mcp-bridge-vscode -p mcp-bridge-harness -p bridge-fixture-server)
  local pkg="$work/packaged" root="$work/root" c
  cargo publish --dry-run --no-verify --allow-dirty --locked --quiet "${crates[@]}"
  cargo package --no-verify --allow-dirty --offline --locked --quiet "${crates[@]}"
  mkdir -p "$pkg" "$root/bin"
  for c in mcp-bridge-vscode mcp-bridge-harness bridge-fixture-server; do
    tar -xzf "target/package/$c-$version.crate" -C "$pkg"
  done
  mkdir -p "$pkg/consumer"
  cp -r bridge/examples/consumer/src "$pkg/consumer/"
  # The consumer asks for the version being released.
  sed 's/^mcp-bridge-vscode = { version = "[^"]*"/mcp-bridge-vscode = { version = "'"$version"'"/' \
    bridge/examples/consumer/Cargo.toml >"$pkg/consumer/Cargo.toml"
  cat >"$pkg/Cargo.toml" <<EOF_TOML
[workspace]
resolver = "3"
members = ["mcp-bridge-vscode-$version", "mcp-bridge-harness-$version", "bridge-fixture-server-$version", "consumer"]
[patch.crates-io]
mcp-bridge-vscode = { path = "mcp-bridge-vscode-$version" }
EOF_TOML
  cp Cargo.lock "$pkg/"
  CARGO_TARGET_DIR="$PWD/target" cargo build --quiet --offline --bins --manifest-path "$pkg/Cargo.toml"
  for c in "${bins[@]}" consumer; do cp "target/debug/$c" "$root/bin/"; done
  rm -rf "$pkg"
  ls "$root/bin"
  local schemas=()
  if [ -d "$spec" ]; then schemas=(--schemas "$spec"); fi
  MCP_BRIDGE_BIN="$root/bin/mcp-bridge-vscode" BRIDGE_FIXTURE_SERVER="$root/bin/bridge-fixture-server" \
    "$root/bin/mcp-bridge-harness" "${schemas[@]}" transcripts/m1
  bash ci/consumer.sh "$root/bin/consumer"
}

# ring's build script compiles C for the target even for `cargo check`; cargo-zigbuild gives
# it Zig as the C compiler, which carries the macOS headers that the Apple SDK would and links
# for the LLVM MinGW ABI (nothing is linked, so no SDK is needed). x86_64 macOS builds the same
# code as aarch64 macOS (no cfg on the architecture in the bridge) and is built on the release
# workflow's macOS runner. One command for all the targets: cargo takes several --target, and
# checks them side by side (the host's build scripts once).
checks() {
  local t args=() installed
  installed="$(rustup target list --installed)"
  for t in $(awk '!/^#/ && $3 == "check" { print $1 }' packaging/targets); do
    if ! grep -qx "$t" <<<"$installed"; then
      skipped "ci/release-check.sh: cargo check for $t (rustup has no target $t)"
      continue
    fi
    args+=(--target "$t")
  done
  [ "${#args[@]}" -gt 0 ] || return 0
  CARGO_TARGET_DIR="$cross_dir" cargo-zigbuild check --quiet --locked -p mcp-bridge-vscode "${args[@]}"
  echo "cargo check -p mcp-bridge-vscode ${args[*]}: ok"
}

# `bash ci/release-check.sh` runs every step of `all`, in that order; naming some runs only
# those, in the order given, on the archives that an earlier run left in target/dist.
workflows() { bash ci/workflows-check.sh; }
all=(cross checks build contents linking replay_x86_64 replay_aarch64 packaged workflows)
declare -A titles=(
  [cross]="the cross-built archives (ci/release.sh --profile dev ${cross_targets[*]}, in target/cross)"
  [checks]="cargo check for the targets that the release workflow alone builds"
  [build]="the other archives (ci/release.sh --profile dev ${other_targets[*]})"
  [contents]="sums and contents"
  [linking]="machine and linking of the binaries"
  [replay_x86_64]="every transcript through the musl x86_64 archive, m1 through the glibc one"
  [replay_aarch64]="transcripts/m1 and m2 through the musl aarch64 archive under qemu-user"
  [packaged]="cargo publish --dry-run; one build of the packaged crates and a consumer; m1 and the consumer's checks"
  [workflows]="the workflows (ci/workflows-check.sh)"
)
steps=("${all[@]}")
[ $# -eq 0 ] || steps=("$@")
for s in "${steps[@]}"; do
  [ -n "${titles[$s]:-}" ] || { echo "release check: no step '$s' (the steps: ${all[*]})" >&2; exit 2; }
done
for s in "${steps[@]}"; do
  # The checks of the binaries read the archives unpacked by `contents`.
  case "$s" in
    linking | replay_*) [ -d "$work/${targets[0]}" ] || contents >/dev/null ;;
  esac
  step "${titles[$s]}" "$s"
done
