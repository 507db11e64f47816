#!/usr/bin/env bash
# The npm packages and the PyPI wheels from the staged binaries, then their checks and the
# README's mcp.json entries (bridge/README.md, "npm and PyPI"). Run after the release step that
# fills the stage; nothing is compiled here.
#
#   bash ci/dist-packages.sh <stage dir> <out dir>
#
# <out dir>/npm gets the tarballs, <out dir>/pypi the wheels. The host's folder of the stage
# (x86_64-unknown-linux-gnu…, or the musl one) serves as `cargo install`'s and the archive's.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 <stage dir> <out dir>" >&2; exit 2; }
cd "$(dirname "$0")/.."
stage="$1"
out="$2"
host=""
for dir in "$stage/$(uname -m)"-unknown-linux-*/; do
  [ -d "$dir" ] && { host="$dir"; break; }
done
[ -n "$host" ] || { echo "$0: no folder of the host ($(uname -m) Linux) in $stage" >&2; exit 1; }
rm -rf "$out/npm" "$out/pypi"
echo "== npm packages and PyPI wheels from $stage"
# Each part prints its seconds.
part() {
  local start=$SECONDS
  bash "$@"
  echo "   ($1: $((SECONDS - start)) s)"
}
part ci/package-npm.sh "$stage" "$out/npm"
part ci/package-pypi.sh "$stage" "$out/pypi"
part ci/dist-npm-test.sh "$out/npm"
part ci/dist-pypi-test.sh "$out/pypi"
part ci/readme-entries.sh "$out/npm" "$out/pypi" "$host"
