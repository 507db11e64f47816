#!/usr/bin/env bash
# The test command of the README: format, lints, the docs, the Windows step under wine, every
# test of the workspace, then every transcript. One debug build serves all steps.
#
# Usage: bash ci/test.sh [STEP ...]   (no step: every step, in the order of STEPS below)
#   e.g. bash ci/test.sh fmt clippy tests      bash ci/test.sh list   (prints the step names)
# The steps run in the order given. A step that runs the built binaries needs the `build` step
# (or an earlier build of target/debug); `sweep` reads what the steps before it kept.
#
# What passes between steps (all exported, so the scripts of the steps see them):
#   MCP_SKIP_LOG      the file where every skip is written; the summary line at the end reads it
#   MCP_STDERR_DIR    where the tests and the replays keep their outputs (the secret sweep reads
#                     them; set it to sweep the outputs of an earlier run)
#   BRIDGE_FIXTURE_ISSUED_SECRETS  the file of the secrets that the fixture issued, in
#                     MCP_STDERR_DIR (the sweep looks for each of them)
#   MCP_FUZZ_CASES    the base cases of each fuzz target (3000 unless set)
#   MCP_SPEC_DIR      the official schemas (default ../shared/spec), read by tests and replays
#
# Skips: a check that cannot run here (no ../shared/spec, no interop peer, no Windows target)
# writes one line "SKIPPED: <why>" to stderr and to the file of MCP_SKIP_LOG (harness/src/skip.rs,
# which the tests of every crate use); the last line of this script names every skip. Under CI (CI set
# to anything but empty, 0 or false) a missing ../shared/spec or interop peer is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
spec="${MCP_SPEC_DIR:-../shared/spec}"
in_ci() { case "${CI:-}" in "" | 0 | false) return 1 ;; *) return 0 ;; esac; }
MCP_SKIP_LOG="$(mktemp "${TMPDIR:-/tmp}/mcp-skips.XXXXXX")"
export MCP_SKIP_LOG
summary() {
  local status="${1:-$?}" skips n
  skips="$(sort -u "$MCP_SKIP_LOG" | sed 's/^SKIPPED: //' | paste -sd ';' - | sed 's/;/; /g')"
  n="$(sort -u "$MCP_SKIP_LOG" | grep -c . || true)"
  rm -f "$MCP_SKIP_LOG"
  if [ "$status" -eq 0 ]; then result=passed; else result="FAILED (exit $status)"; fi
  if [ "$n" -eq 0 ]; then
    echo "== summary: $result, nothing skipped"
  else
    echo "== summary: $result, $n skipped: $skips"
  fi
}
# The cross builds of the release archives run in the background from the end of `build` to
# the start of `release` (start_cross below); a run that ends before ends them too.
cross_pid=""
stop_cross() {
  if [ -n "$cross_pid" ]; then
    kill -CONT -- "-$cross_pid" 2>/dev/null || true
    kill -TERM -- "-$cross_pid" 2>/dev/null || true
    wait "$cross_pid" 2>/dev/null || true
    cross_pid=""
    rm -f "$cross_log"
  fi
}
# The exit status is read first: stop_cross's own commands would replace it.
trap 'rc=$?; stop_cross; summary "$rc"' EXIT
skipped() { echo "SKIPPED: $1" | tee -a "$MCP_SKIP_LOG" >&2; }
if [ ! -f "$spec/2026-07-28/schema/schema.json" ] || [ ! -f "$spec/2025-11-25/schema/schema.json" ]; then
  if in_ci; then
    echo "ci/test.sh: no schemas in $spec (2025-11-25/ and 2026-07-28/): under CI a failure, not a skip" >&2
    exit 1
  fi
  skipped "ci/test.sh: no schemas in $spec: the schema checks of the transcripts and tests"
fi
# The steps, in the order of a full run.
STEPS=(fmt layers clippy doc build windows tests keychain contention transcripts embedded
  conformance soak release packages action sweep)
if [ "${1:-}" = list ]; then
  printf '%s\n' "${STEPS[@]}"
  trap - EXIT
  rm -f "$MCP_SKIP_LOG"
  exit 0
fi
for step in "$@"; do
  case " ${STEPS[*]} " in
    *" $step "*) ;;
    *) echo "ci/test.sh: no step '$step' (the steps: ${STEPS[*]})" >&2; exit 2 ;;
  esac
done
# The secret sweep (ci/sweep.sh) searches every output that the tests and the replays (also
# under wine) keep here, and the secrets that the fixture issued (docs/harness.md).
export MCP_STDERR_DIR="${MCP_STDERR_DIR:-$(mktemp -d)}"
export BRIDGE_FIXTURE_ISSUED_SECRETS="$MCP_STDERR_DIR/issued-secrets.txt"
# The fuzz targets run 3000 base cases here (bridge/README.md, "Reliability"); raise it for long runs.
export MCP_FUZZ_CASES="${MCP_FUZZ_CASES:-3000}"

step_fmt() {
  echo "== rustfmt"
  cargo fmt --all -- --check
}
# No import cycle and no arrow back up in the three crates (ci/layers.py says what it checks).
step_layers() {
  echo "== layers"
  python3 ci/layers.py
}
step_clippy() {
  echo "== clippy"
  cargo clippy --workspace --all-targets --locked -- -D warnings
}
# Every doc comment builds, its links resolve (private items too): rustdoc's warnings fail.
step_doc() {
  echo "== doc"
  RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --document-private-items --locked
}
step_build() {
  echo "== build"
  cargo build --workspace --all-targets --locked
}
# The Windows bridge and fixture under wine (ci/windows.sh): the command-form transcripts and
# the Windows process tests (`under_wine_…`, which the Linux run leaves to this step).
step_windows() {
  bash ci/windows.sh
}
# The keychain tests need the D-Bus session of ci/keychain-tests.sh (outside it they record a
# skip, which fails under CI): they run there, in the next step. The tests under wine run in
# ci/windows.sh.
step_tests() {
  echo "== tests"
  cargo test --workspace --locked -- --skip the_keychain_store --skip the_index_of_the_keychain --skip under_wine_
}
step_keychain() {
  bash ci/keychain-tests.sh
}
# The background cross builds stop meanwhile (SIGSTOP to their process group): the cores are
# busy with the hogs of the contention run alone, as that run says.
step_contention() {
  echo "== contention (the stop, fault matrix and embedded process tests with every core busy)"
  if [ -n "$cross_pid" ]; then kill -STOP -- "-$cross_pid" 2>/dev/null || true; fi
  local status=0
  bash ci/contention.sh || status=$?
  if [ -n "$cross_pid" ]; then kill -CONT -- "-$cross_pid" 2>/dev/null || true; fi
  return "$status"
}
# Every transcript, with the schema checks where the schemas are (outside CI only without them:
# the harness records the skip itself). Arguments go to the harness before the folder.
replay() {
  if [ -d "$spec" ]; then
    target/debug/harness --schemas "$spec" "$@" transcripts/
  else
    target/debug/harness "$@" transcripts/
  fi
}
# With the jitter of a fresh seed each run (docs/harness.md, "Jitter"): an order that a transcript
# wrongly relies on fails here in a few runs. The seed is printed, before and with each failure,
# so that a failure can be replayed (MCP_JITTER_SEED=<seed> replays a whole run). The embedded
# step draws its own seed: the two steps together try two sets of waits per run.
jitter_seed() {
  echo "${MCP_JITTER_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}"
}
step_transcripts() {
  local seed
  seed="$(jitter_seed)"
  echo "== transcripts (jitter seed $seed; replay: target/debug/harness --schemas $spec --jitter $seed transcripts/)"
  replay --jitter "$seed"
}
step_embedded() {
  local seed
  seed="$(jitter_seed)"
  echo "== transcripts through the embedded bridge (M5: bridge-fixture-server --embedded; jitter seed $seed; replay: target/debug/harness --schemas $spec --embedded --jitter $seed transcripts/)"
  replay --embedded --jitter "$seed"
}
# The release archives (ci/release.sh) in the dev profile, every target of packaging/targets
# that builds here: sums, contents, linking, every transcript through the musl x86_64 archive,
# m1 and m2 through the musl aarch64 one under qemu-user, the published crates packaged and
# built once with a server author's crate that embeds the bridge (M5), `cargo check` for the
# targets that only the release workflow builds, the workflows' lint (ci/release-check.sh).
#
# Its cross builds and checks (release-check's steps `cross` and `checks`: CPU and nothing
# else, in a cargo folder of their own, target/cross) start in the background when `build`
# ends, if `release` comes later in this run: the steps between (wine, the tests, the
# transcripts, the conformance suite, the soak) leave a core idle much of their time, and the
# builds run at the lowest priority (nice 19), so that they take only what those steps leave.
# Their output goes to a log that this step prints when it has waited for them.
cross_log=""
start_cross() {
  # Outside MCP_STDERR_DIR: cargo's output is no output of the bridge for the sweep.
  cross_log="$(mktemp "${TMPDIR:-/tmp}/mcp-release-cross.XXXXXX")"
  echo "== release: the cross builds and checks start in the background (nice 19; log printed by the release step)"
  # Its own process group (setsid), so that the contention step can stop and resume the whole
  # tree of cargo, rustc and zig, and an early end can end it.
  setsid nice -n 19 bash ci/release-check.sh cross checks >"$cross_log" 2>&1 </dev/null &
  cross_pid=$!
}
step_release() {
  echo "== release archives (ci/release-check.sh)"
  if [ -n "$cross_pid" ]; then
    local waited=$SECONDS status=0
    wait "$cross_pid" || status=$?
    cross_pid=""
    echo "== release: waited $((SECONDS - waited)) s for the background cross builds and checks; their log:"
    cat "$cross_log"
    rm -f "$cross_log"
    [ "$status" -eq 0 ] || { echo "== release: the background cross builds or checks failed (exit $status)" >&2; return "$status"; }
    bash ci/release-check.sh build contents linking replay_x86_64 replay_aarch64 packaged workflows
  else
    bash ci/release-check.sh
  fi
}
# The npm packages and the PyPI wheels from the staged binaries of the archives, installed with
# no registry and run as VS Code starts them, and every mcp.json entry of the README's Install.
step_packages() {
  echo "== npm and PyPI packages (ci/dist-packages.sh)"
  bash ci/dist-packages.sh target/dist/stage target/dist
}
# The GitHub Action (action.yml) run as a script against the fixture, the Python SDK 1.30 server
# and the TypeScript SDK v1 server: its install step from the npm tarballs of the packages step
# (or the workspace build when they are not there), its check step with JUnit reports.
step_action() {
  echo "== the GitHub Action's steps (ci/action-check.sh)"
  bash ci/action-check.sh
}
step_conformance() {
  echo "== conformance"
  bash ci/conformance.sh
}
step_soak() {
  echo "== soak (four bridges, 2 minutes)"
  bash ci/soak.sh 2
}
# Last: it reads the outputs of every step before it that keeps them (the soak's bridges too).
step_sweep() {
  echo "== secret sweep"
  bash ci/sweep.sh
}

if [ "$#" -eq 0 ]; then
  set -- "${STEPS[@]}"
fi
# Each step's seconds, printed after it and together at the end: what a change to CI's
# length costs or saves is read from these lines.
times=()
steps=("$@")
for i in "${!steps[@]}"; do
  step="${steps[$i]}"
  started=$SECONDS
  "step_$step"
  times+=("$step $((SECONDS - started))")
  echo "== $step: $((SECONDS - started)) s"
  # After `build`, with `release` still to come and a step between: the cross builds start.
  if [ "$step" = build ]; then
    case " ${steps[*]:$((i + 2))} " in *" release "*) start_cross ;; esac
  fi
done
echo "== seconds per step: ${times[*]}"
