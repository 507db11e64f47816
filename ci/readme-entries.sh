#!/usr/bin/env bash
# Every mcp.json entry of the README's Install section, started as VS Code starts it
# (ci/readme_entries.py), against the packages made here and with no registry: the npm tarballs
# installed into a temporary global prefix (where `npx` finds them), the wheels for `uvx` and
# `pipx run` (offline, from the folder), and the host's staged programs as `cargo install` and
# the release archive leave them.
#
#   bash ci/readme-entries.sh <npm tarballs dir> <wheels dir> <host stage dir>
#
# `uvx` and `pipx` come from ci/setup.sh (target/py-tools); where one is missing, its entries are
# skips.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 <npm dir> <wheels dir> <host stage dir>" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
npm_dir="$(cd "$1" && pwd)"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
platform="$(node -p 'process.platform + "-" + process.arch')"
[ -d "$root/target/py-tools/bin" ] && export PATH="$PATH:$root/target/py-tools/bin"
prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
echo "== README entries: npm install -g of the tarballs into a temporary prefix (no registry)"
npm install -g --prefix "$prefix" --offline --registry http://127.0.0.1:9 --no-audit --no-fund \
  --loglevel=error "$npm_dir/mcp-bridge-vscode-$version.tgz" "$npm_dir/mcp-bridge-vscode-$platform-$version.tgz"
python3 "$root/ci/readme_entries.py" --npm-prefix "$prefix" --wheels "$2" --bin-dir "$3"
