#!/usr/bin/env bash
# Checks the npm packages of ci/package-npm.sh as a user gets them, with no registry: the main
# package and the host's platform package installed from their tarballs into an empty folder.
#
#   bash ci/dist-npm-test.sh <dir of the .tgz files>
#
# 1. `npx mcp-bridge-vscode --version` prints the workspace's version.
# 2. What npx runs (node_modules/.bin/mcp-bridge-vscode) is the native bridge itself: started as
#    VS Code starts it, its process is the platform package's binary, a direct child of the
#    client (ci/vscode_start.py --native): no Node process owns or copies VS Code's pipes.
# 3. `npx -p mcp-bridge-vscode mcp-bridge-harness check -- bridge-fixture-server` passes (the harness finds
#    the bridge beside itself); the transcripts of transcripts/m1 replay with the installed
#    bridge, fixture and harness.
# 4. The same install with --ignore-scripts (and every Windows install) keeps the Node launcher
#    (lib/launch.js): its memory is printed (Pss, for bridge/README.md); a SIGTERM to it alone
#    ends the whole tree (it forwards the signal); the stop and exit transcripts of m1 (R7-*)
#    replay through it (its exit codes and stop sequence are the bridge's).
# 5. The install step with a platform binary that does not run here keeps the launcher and
#    leaves the platform's file as it was (it must not write through its hard link).
# 6. The launcher runs nothing, and says why, on a glibc system that has only the musl package,
#    and with a platform package of another version.
# 7. The launcher and the install step run only the binaries of their own dependency with the
#    SHA-256 recorded at pack time: a platform package planted above the project or in Node's
#    global folders is never found, and one beside the launcher with a copied version field
#    does not run (ci/npm-launcher-test.js).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 <dir of the npm tarballs>" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
npm_dir="$(cd "$1" && pwd)"
spec="${MCP_SPEC_DIR:-$root/../shared/spec}"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
platform="$(node -p 'process.platform + "-" + process.arch')"
main_tgz="$npm_dir/mcp-bridge-vscode-$version.tgz"
host_tgz="$npm_dir/mcp-bridge-vscode-$platform-$version.tgz"
for f in "$main_tgz" "$host_tgz"; do
  [ -f "$f" ] || { echo "$0: $f is missing (run ci/package-npm.sh)" >&2; exit 1; }
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# An unreachable registry and --offline: the install reads the two tarballs and nothing else.
install() {
  mkdir -p "$1"
  (cd "$1" && npm install --offline --registry http://127.0.0.1:9 --no-audit --no-fund \
    --loglevel=error "${@:2}" "$main_tgz" "$host_tgz")
}
replay() {
  local bin="$1/node_modules/.bin" schemas=() files=("${@:2}")
  [ -d "$spec" ] && schemas=(--schemas "$spec")
  (cd "$root" && MCP_BRIDGE_BIN="$bin/mcp-bridge-vscode" BRIDGE_FIXTURE_SERVER="$bin/bridge-fixture-server" \
    "$bin/mcp-bridge-harness" "${schemas[@]}" "${files[@]}" | tail -n 2)
}

echo "== npm: install from the tarballs (no registry)"
install "$work/npx"
got="$(cd "$work/npx" && npx --offline mcp-bridge-vscode --version)"
[ "$got" = "mcp-bridge-vscode $version" ] || { echo "$0: npx mcp-bridge-vscode --version printed '$got'" >&2; exit 1; }
echo "npx mcp-bridge-vscode --version: $got"
bin="$work/npx/node_modules/.bin"
python3 "$root/ci/vscode_start.py" --native "$bin/mcp-bridge-vscode" -- "$bin/mcp-bridge-vscode" -- "$bin/bridge-fixture-server"
echo "== npm: npx -p mcp-bridge-vscode mcp-bridge-harness check -- bridge-fixture-server"
(cd "$work/npx" && env -u MCP_BRIDGE_BIN npx --offline -p mcp-bridge-vscode mcp-bridge-harness check -- bridge-fixture-server | tail -n 1)
echo "== npm: transcripts/m1 with MCP_BRIDGE_BIN=node_modules/.bin/mcp-bridge-vscode"
replay "$work/npx" transcripts/m1

echo "== npm: the Node launcher (install with --ignore-scripts, as on Windows)"
install "$work/launcher" --ignore-scripts
bin="$work/launcher/node_modules/.bin"
python3 "$root/ci/vscode_start.py" --tree -- "$bin/mcp-bridge-vscode" -- "$bin/bridge-fixture-server"
python3 "$root/ci/vscode_start.py" --term-first -- "$bin/mcp-bridge-vscode" -- "$bin/bridge-fixture-server"
replay "$work/launcher" transcripts/m1/R7-*.jsonl

echo "== npm: the install step with a platform binary that does not run"
broken="$work/broken/node_modules"
mkdir -p "$broken/@mcp-bridge-vscode/$platform/bin"
cp -r "$work/launcher/node_modules/mcp-bridge-vscode" "$broken/"
cp "$work/launcher/node_modules/@mcp-bridge-vscode/$platform/package.json" "$broken/@mcp-bridge-vscode/$platform/"
for b in mcp-bridge-vscode mcp-bridge-harness bridge-fixture-server; do
  printf 'not a program\n' >"$broken/@mcp-bridge-vscode/$platform/bin/$b"
  chmod 755 "$broken/@mcp-bridge-vscode/$platform/bin/$b"
done
# As if these were the packed binaries (their digests recorded), so that the install step gets
# as far as running one.
node -e '
  const [file, pkg, dir] = process.argv.slice(1), fs = require("fs"), sums = {};
  for (const b of fs.readdirSync(dir))
    sums[b] = require("crypto").createHash("sha256").update(fs.readFileSync(`${dir}/${b}`)).digest("hex");
  fs.writeFileSync(file, JSON.stringify({ [pkg]: sums }));
' "$broken/mcp-bridge-vscode/lib/checksums.json" "@mcp-bridge-vscode/$platform" "$broken/@mcp-bridge-vscode/$platform/bin"
(cd "$broken/mcp-bridge-vscode" && npm_config_user_agent="npm/$(npm --version)" node install.js 2>/dev/null)
[ "$(cat "$broken/@mcp-bridge-vscode/$platform/bin/mcp-bridge-vscode")" = "not a program" ] ||
  { echo "$0: the install step wrote into the platform package's binary" >&2; exit 1; }
cmp -s "$broken/mcp-bridge-vscode/bin/mcp-bridge-vscode" "$root/packaging/npm/mcp-bridge-vscode/bin/mcp-bridge-vscode" ||
  { echo "$0: the launcher script is not back in place" >&2; exit 1; }
echo "the launcher stays, the platform's file is unchanged"

# The launcher's choice of its platform package: only the one of this libc and of its own
# version (lib/platform.js); here a glibc host, given the musl package alone, then a glibc
# package of another version. Each start fails with the reason, and runs nothing.
launcher_error() {
  local out
  if out="$(node "$1/mcp-bridge-vscode/bin/mcp-bridge-vscode" --version 2>&1)"; then
    echo "$0: the launcher ran a binary ($out) with $2" >&2
    exit 1
  fi
  case "$out" in
    *"$3"*) echo "$2: $out" ;;
    *) echo "$0: with $2 the launcher said '$out', not '$3'" >&2; exit 1 ;;
  esac
}
echo "== npm: the launcher with the musl package on a glibc system, and with a stale package"
if [ "$(node -p 'process.report.getReport().header.glibcVersionRuntime ? 1 : 0')" = 1 ]; then
  mixed="$work/mixed/node_modules"
  mkdir -p "$mixed/@mcp-bridge-vscode"
  cp -r "$work/launcher/node_modules/mcp-bridge-vscode" "$mixed/"
  cp -r "$work/launcher/node_modules/@mcp-bridge-vscode/$platform" "$mixed/@mcp-bridge-vscode/$platform-musl"
  launcher_error "$mixed" "only $platform-musl installed" "is built for musl and this system has glibc"
  rm -rf "$mixed/@mcp-bridge-vscode/$platform-musl"
  cp -r "$work/launcher/node_modules/@mcp-bridge-vscode/$platform" "$mixed/@mcp-bridge-vscode/$platform"
  node -e 'const f=process.argv[1], p=JSON.parse(require("fs").readFileSync(f)); p.version="0.0.1"; require("fs").writeFileSync(f, JSON.stringify(p))' \
    "$mixed/@mcp-bridge-vscode/$platform/package.json"
  launcher_error "$mixed" "$platform of version 0.0.1" "is version 0.0.1, not $version"
fi

echo "== npm: the launcher runs only its own dependency's binaries, with their packed SHA-256"
node "$root/ci/npm-launcher-test.js" "$work/launcher/node_modules" "$version" | grep -E '^(not )?ok|^# (pass|fail)'
