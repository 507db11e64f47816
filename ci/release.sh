#!/usr/bin/env bash
# Release archives of the three binaries (mcp-bridge-vscode, mcp-bridge-harness, bridge-fixture-server).
#
#   bash ci/release.sh [--profile <profile>] [<target>…]
#
# --profile release (the default) is the shipped build (Cargo.toml, [profile.release]: fat LTO,
# one code generation unit, abort on panic). CI passes --profile dev: the same commands, the
# same linking and the same archives, built in a fraction of the time (no optimisation, no
# LTO). The targets default to those of packaging/targets that this host builds (on Linux the
# `here` ones, on macOS the `macos` ones); naming some builds only those (the release workflow
# names one per job, also the `release` ones).
#
# Each target is built by one cargo command of one form, `--workspace --exclude harness --bins
# --target <T>` (harness/cargo-run, the `cargo run -p harness` name, is not shipped):
#   x86_64-unknown-linux-gnu    cargo zigbuild, glibc 2.17 baseline (runs on any distribution
#   aarch64-unknown-linux-gnu   since 2014; dynamically linked to glibc, so its name service
#                               resolves `.local` and NSS hosts as every other program does)
#   x86_64-unknown-linux-musl   cargo zigbuild, static (musl's libc linked in: Alpine and any
#   aarch64-unknown-linux-musl  other Linux, no loader needed)
#   x86_64-pc-windows-gnu       cargo build with Debian's MinGW-w64 gcc (the same command and
#                               profile as the Windows build of CI, so cargo reuses it)
#   aarch64-pc-windows-gnullvm  cargo zigbuild (Zig links for the LLVM MinGW ABI; Debian has no
#                               MinGW-w64 gcc for arm64)
#   *-apple-darwin              cargo build on a macOS host (the release workflow's runner)
# (bridge/README.md, "Distribution", says why these tools.)
#
# Output, a stable layout (the npm and PyPI packages, packaging/, are made from stage/):
#   target/dist/mcp-bridge-vscode-<version>-<target>.tar.gz   (.zip for Windows), holding
#       mcp-bridge-vscode-<version>-<target>/{mcp-bridge-vscode,mcp-bridge-harness,bridge-fixture-server}
#       plus README.md and LICENSE (.exe binaries in the .zip)
#   target/dist/SHA256SUMS                   `sha256sum -c SHA256SUMS` in target/dist/ checks all
#   target/dist/stage/<target>/<binary>      the unpacked binaries of each target (.exe on Windows)
# <version> is the workspace's version; <target> the Rust target triple above. The archives of
# targets not built by this run are kept (and summed), so targets may be built one by one.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile="${2:?--profile needs a name}"; shift 2 ;;
    --profile=*) profile="${1#--profile=}"; shift ;;
    -h | --help) sed -n '2,/^[^#]/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
    -*) echo "release.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then
  case "$(uname -s)" in Darwin) where=macos ;; *) where=here ;; esac
  mapfile -t targets < <(awk -v w="$where" '!/^#/ && $2 == w { print $1 }' packaging/targets)
fi
# Cargo's folder of a profile: dev builds into debug/, release into release/, others by name;
# under cargo's target folder (CARGO_TARGET_DIR: CI builds the cross targets in a folder of
# their own, so that they build beside the other steps' cargo commands, ci/test.sh).
built="${CARGO_TARGET_DIR:-target}"
case "$profile" in dev) outdir=debug ;; *) outdir="$profile" ;; esac

# The oldest glibc that the Linux binaries need (Rust's own floor for these targets).
glibc=2.17
bins=(mcp-bridge-vscode mcp-bridge-harness bridge-fixture-server)
version="$(cargo pkgid -p mcp-bridge-vscode | sed 's/.*@//')"
dist=target/dist

zigbuild() {
  command -v cargo-zigbuild >/dev/null || { echo "release.sh: cargo-zigbuild is missing (ci/setup.sh installs it)" >&2; exit 1; }
  cargo zigbuild --locked --workspace --exclude harness --bins --profile "$profile" "$@"
}

# One cargo command per target; the binaries land in target/<target>/<profile folder>/.
build() {
  local t="$1"
  case "$t" in
    *-linux-gnu) zigbuild --target "$t.$glibc" ;;
    *-linux-musl | *-windows-gnullvm) zigbuild --target "$t" ;;
    *-windows-gnu | *-apple-darwin)
      cargo build --locked --workspace --exclude harness --bins --profile "$profile" --target "$t" ;;
    *) echo "release.sh: no recipe for the target $t" >&2; exit 2 ;;
  esac
}

mkdir -p "$dist"
for t in "${targets[@]}"; do
  echo "== release.sh: $t ($profile)"
  build "$t"
  exe=""
  case "$t" in *windows*) exe=.exe ;; esac
  stage="$dist/stage/$t"
  rm -rf "$stage"
  mkdir -p "$stage"
  for b in "${bins[@]}"; do
    cp "$built/$t/$outdir/$b$exe" "$stage/"
  done
  name="mcp-bridge-vscode-$version-$t"
  work="$(mktemp -d)"
  mkdir "$work/$name"
  cp "$stage"/* README.md LICENSE "$work/$name/"
  if [ -n "$exe" ]; then
    rm -f "$dist/$name.zip"
    (cd "$work" && python3 -m zipfile -c "$name.zip" "$name")
    mv "$work/$name.zip" "$dist/"
  else
    tar -C "$work" --owner=0 --group=0 --numeric-owner --sort=name -czf "$dist/$name.tar.gz" "$name"
  fi
  rm -rf "$work"
done
shopt -s nullglob
archives=("$dist"/*.tar.gz "$dist"/*.zip)
shopt -u nullglob
(cd "$dist" && sha256sum -- "${archives[@]#"$dist/"}" >SHA256SUMS)
echo "== release.sh: $dist"
cat "$dist/SHA256SUMS"
