#!/usr/bin/env bash
# Every entry of the README's Install section (`mcpServers` and `servers`), started as its
# client starts it (ci/readme_entries.py), against the packages made here and no outside registry: the npm
# tarballs served by a registry on loopback (ci/npm_registry.py), the wheels for `uvx` and
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
[ -d "$root/target/py-tools/bin" ] && export PATH="$PATH:$root/target/py-tools/bin"
python3 "$root/ci/readme_entries.py" --npm "$1" --wheels "$2" --bin-dir "$3"
