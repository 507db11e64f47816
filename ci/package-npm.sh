#!/usr/bin/env bash
# The npm packages from the staged binaries: one package per platform (@mcp-bridge-vscode/<os>-<cpu>,
# and <os>-<cpu>-musl for a Linux with musl libc, selected by npm through `os`, `cpu` and `libc`)
# and the main package mcp-bridge-vscode, whose optional dependencies name them and whose
# lib/checksums.json records the SHA-256 of each of their binaries (packaging/npm/, bridge/README.md "npm and PyPI").
#
#   bash ci/package-npm.sh <stage dir> <out dir>
#
# <stage dir> holds one folder per Rust target (x86_64-unknown-linux-gnu/, …) with
# mcp-bridge-vscode, mcp-bridge-harness and bridge-fixture-server (.exe on Windows), as ci/release.sh leaves
# them; <out dir> receives the tarballs of `npm pack`. Nothing is compiled here.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 <stage dir> <out dir>" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
stage="$(cd "$1" && pwd)"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
[ -n "$version" ] || { echo "$0: no version in Cargo.toml" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# npm's names (process.platform, process.arch, the libc field or -) of a Rust target; empty for
# one npm has no package for (packaging/targets lists the targets).
npm_platform() {
  case "$1" in
    x86_64-unknown-linux-gnu*) echo "linux x64 glibc" ;;
    aarch64-unknown-linux-gnu*) echo "linux arm64 glibc" ;;
    x86_64-unknown-linux-musl) echo "linux x64 musl" ;;
    aarch64-unknown-linux-musl) echo "linux arm64 musl" ;;
    x86_64-pc-windows-gnu | x86_64-pc-windows-msvc) echo "win32 x64 -" ;;
    aarch64-pc-windows-msvc | aarch64-pc-windows-gnullvm) echo "win32 arm64 -" ;;
    x86_64-apple-darwin) echo "darwin x64 -" ;;
    aarch64-apple-darwin) echo "darwin arm64 -" ;;
  esac
}

# Writes the fields of a package.json: set_json <file> <node expression on `p`>.
set_json() {
  node -e '
    const fs = require("fs");
    const [file, version, extra] = process.argv.slice(1);
    const p = JSON.parse(fs.readFileSync(file, "utf8"));
    p.version = version;
    Object.assign(p, JSON.parse(extra));
    fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n");
  ' "$1" "$version" "$2"
}

deps="{}"
# The SHA-256 of each binary of each platform package: the main package records them in
# lib/checksums.json, and its launcher and install step run a platform binary only with its
# recorded digest (packaging/npm/mcp-bridge-vscode/lib/platform.js).
sums="{}"
for dir in "$stage"/*/; do
  target="$(basename "$dir")"
  read -r os cpu libc <<<"$(npm_platform "$target")" || true
  if [ -z "${os:-}" ]; then
    echo "$0: no npm platform for the target $target; left out" >&2
    continue
  fi
  exe=""
  [ "$os" = win32 ] && exe=".exe"
  name="$os-$cpu"
  fields="\"os\":[\"$os\"],\"cpu\":[\"$cpu\"]"
  if [ "$libc" != - ]; then
    fields="$fields,\"libc\":[\"$libc\"]"
    if [ "$libc" = musl ]; then name="$name-musl"; fi
  fi
  pkg="$work/$name"
  if [ -d "$pkg" ]; then
    echo "$0: two targets for the npm platform $name ($target and another); give one" >&2
    exit 1
  fi
  mkdir -p "$pkg/bin"
  cp "$root/packaging/npm/platform/package.json" "$pkg/"
  cp "$root/packaging/npm/README.md" "$pkg/"
  [ -f "$root/LICENSE" ] && cp "$root/LICENSE" "$pkg/"
  for b in mcp-bridge-vscode mcp-bridge-harness bridge-fixture-server; do
    [ -f "$dir/$b$exe" ] || { echo "$0: $dir$b$exe is missing" >&2; exit 1; }
    cp "$dir/$b$exe" "$pkg/bin/"
    chmod 755 "$pkg/bin/$b$exe"
    sums="$(node -e '
      const [sums, pkg, exe, file] = process.argv.slice(1);
      const d = JSON.parse(sums);
      const hash = require("crypto").createHash("sha256").update(require("fs").readFileSync(file)).digest("hex");
      (d[pkg] = d[pkg] || {})[exe] = hash;
      console.log(JSON.stringify(d));
    ' "$sums" "@mcp-bridge-vscode/$name" "$b$exe" "$pkg/bin/$b$exe")"
  done
  set_json "$pkg/package.json" \
    "{\"name\":\"@mcp-bridge-vscode/$name\",$fields,\"description\":\"The native binaries of mcp-bridge-vscode for $name ($target)\"}"
  deps="$(node -e 'const d=JSON.parse(process.argv[1]); d[process.argv[2]]=process.argv[3]; console.log(JSON.stringify(d))' \
    "$deps" "@mcp-bridge-vscode/$name" "$version")"
  (cd "$pkg" && npm pack --silent --pack-destination "$out" >/dev/null)
  echo "npm: @mcp-bridge-vscode/$name $version ($target)"
done
[ "$deps" != "{}" ] || { echo "$0: no staged target in $stage" >&2; exit 1; }

main="$work/main"
cp -r "$root/packaging/npm/mcp-bridge-vscode" "$main"
cp "$root/packaging/npm/README.md" "$main/"
[ -f "$root/LICENSE" ] && cp "$root/LICENSE" "$main/"
set_json "$main/package.json" "{\"optionalDependencies\":$deps}"
node -e 'process.stdout.write(JSON.stringify(JSON.parse(process.argv[1]), null, 2) + "\n")' "$sums" >"$main/lib/checksums.json"
(cd "$main" && npm pack --silent --pack-destination "$out" >/dev/null)
echo "npm: mcp-bridge-vscode $version -> $out"
