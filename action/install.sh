#!/usr/bin/env bash
# The install step of action.yml: puts mcp-bridge-harness (and the bridge beside it) in a folder
# of its own and names it in $GITHUB_ENV (MCP_BRIDGE_HARNESS_BIN) and $GITHUB_PATH.
#   INPUT_INSTALLER  npm | pip
#   INPUT_VERSION    a version, or latest
#   INPUT_FROM       registry (npm or PyPI) | <folder of local .tgz or .whl packages> (no registry)
#                    | workspace:<folder of built binaries>
set -euo pipefail
installer="${INPUT_INSTALLER:-npm}"
version="${INPUT_VERSION:-latest}"
from="${INPUT_FROM:-registry}"
prefix="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/mcp-bridge-harness.XXXXXX")"
fail() { echo "mcp-bridge-harness action: $*" >&2; exit 2; }
case "$installer" in npm | pip) ;; *) fail "installer is '$installer': npm or pip" ;; esac
case "$from" in
  workspace:*)
    bin="$(cd "${from#workspace:}" && pwd)"
    ;;
  registry)
    if [ "$installer" = npm ]; then
      npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "mcp-bridge-vscode@$version"
      bin="$prefix/node_modules/.bin"
    else
      python3 -m venv "$prefix/venv"
      pin=""
      [ "$version" = latest ] || pin="==$version"
      "$prefix/venv/bin/pip" install -q --disable-pip-version-check "mcp-bridge-vscode$pin"
      bin="$prefix/venv/bin"
    fi
    ;;
  *)
    dir="$(cd "$from" && pwd)" || fail "from is '$from': no such folder"
    if [ "$installer" = npm ]; then
      platform="$(node -p 'process.platform + "-" + process.arch')"
      want="${version/latest/[0-9]*}"
      shopt -s nullglob
      main=("$dir"/mcp-bridge-vscode-$want.tgz)
      host=("$dir"/mcp-bridge-vscode-"$platform"-$want.tgz)
      [ "${#main[@]}" -eq 1 ] && [ "${#host[@]}" -eq 1 ] \
        || fail "$dir needs one mcp-bridge-vscode-<version>.tgz and one mcp-bridge-vscode-$platform-<version>.tgz"
      # An unreachable registry and --offline: only the two tarballs are read.
      npm install --prefix "$prefix" --offline --registry http://127.0.0.1:9 --no-audit --no-fund \
        --loglevel=error "${main[0]}" "${host[0]}"
      bin="$prefix/node_modules/.bin"
    else
      python3 -m venv "$prefix/venv"
      pin=""
      [ "$version" = latest ] || pin="==$version"
      "$prefix/venv/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$dir" "mcp-bridge-vscode$pin"
      bin="$prefix/venv/bin"
    fi
    ;;
esac
[ -x "$bin/mcp-bridge-harness" ] || fail "no mcp-bridge-harness in $bin"
"$bin/mcp-bridge-harness" check --version
echo "MCP_BRIDGE_HARNESS_BIN=$bin/mcp-bridge-harness" >>"${GITHUB_ENV:-/dev/null}"
echo "$bin" >>"${GITHUB_PATH:-/dev/null}"
