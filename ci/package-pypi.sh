#!/usr/bin/env bash
# The PyPI wheels from the staged binaries, one per target (packaging/pypi/make_wheels.py,
# bridge/README.md "npm and PyPI"). Nothing is compiled here.
#
#   bash ci/package-pypi.sh <stage dir> <out dir>
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 <stage dir> <out dir>" >&2; exit 2; }
exec python3 "$(dirname "$0")/../packaging/pypi/make_wheels.py" "$1" "$2"
