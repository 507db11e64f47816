#!/usr/bin/env bash
# Checks the wheels of ci/package-pypi.sh as a Python user gets them, with no index: pip picks
# the host's wheel from the folder and installs it into a fresh venv.
#
#   bash ci/dist-pypi-test.sh <dir of the .whl files>
#
# 1. `mcp-bridge-vscode --version` prints the workspace's version.
# 2. Started as VS Code starts it, the venv's mcp-bridge-vscode is the native bridge itself
#    (ci/vscode_start.py --native) and answers initialize.
# 3. `mcp-bridge-harness check -- bridge-fixture-server` passes: the harness finds the bridge beside it in
#    the venv's scripts folder (no MCP_BRIDGE_BIN), as `uvx --from mcp-bridge-vscode mcp-bridge-harness
#    check -- …` does.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 <dir of the wheels>" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
wheels="$(cd "$1" && pwd)"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
# The wheels carry the PEP 440 form of the version (0.1.0-rc.1 is 0.1.0rc1).
pyversion="$(python3 "$root/packaging/pypi/make_wheels.py" --version)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "== pypi: the host's wheel into a fresh venv (no index)"
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-index --find-links "$wheels" "mcp-bridge-vscode==$pyversion"
bin="$work/venv/bin"
got="$("$bin/mcp-bridge-vscode" --version)"
[ "$got" = "mcp-bridge-vscode $version" ] || { echo "$0: mcp-bridge-vscode --version printed '$got'" >&2; exit 1; }
echo "mcp-bridge-vscode --version: $got"
python3 "$root/ci/vscode_start.py" --native "$bin/mcp-bridge-vscode" -- "$bin/mcp-bridge-vscode" -- "$bin/bridge-fixture-server"
echo "== pypi: mcp-bridge-harness check -- bridge-fixture-server (the bridge found beside the harness)"
(cd "$work" && env -u MCP_BRIDGE_BIN PATH="$bin:$PATH" mcp-bridge-harness check -- bridge-fixture-server | tail -n 3)
