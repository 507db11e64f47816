#!/usr/bin/env python3
"""The grouped report of ci/repeat-tests.sh: reads the output of each run of `cargo test`
(one file a run, named run-<n>.txt) and groups the failures by their signature, the test's
name and the first line of its panic (numbers left out), each with its count, its runs and its
first message, as `harness --repeat` does for the transcripts.

Usage: python3 ci/repeat_report.py DIR   (exit 1 when a run failed)
"""
import pathlib
import re
import sys


def signature(test: str, message: str) -> str:
    return re.sub(r"\d+", "#", f"{test} | {message}")


def failures(text: str) -> list[tuple[str, str, str]]:
    """(test, first panic line, the panic's lines) of each failed test of one run; a run that
    failed with no failed test (a build error, a crashed test binary) is one failure of its own."""
    out = []
    blocks = re.split(r"^---- (\S+) stdout ----$", text, flags=re.M)
    for name, body in zip(blocks[1::2], blocks[2::2]):
        lines = [l for l in body.splitlines() if l.strip()]
        panic = next((l for l in lines if "panicked at" in l), lines[0] if lines else "")
        at = lines.index(panic) if panic in lines else 0
        first = lines[at + 1] if at + 1 < len(lines) else panic
        detail = []
        for l in lines[at:at + 12]:
            if l.strip() in ("failures:", "stack backtrace:"):
                break
            detail.append(l)
        out.append((name, first.strip(), "\n".join(detail)))
    if not out and re.search(r"^error: (test failed|could not compile)|^test result: FAILED", text, re.M):
        line = next(l for l in text.splitlines() if l.startswith(("error:", "test result: FAILED")))
        out.append(("(the run)", line.strip(), "\n".join(text.splitlines()[-20:])))
    return out


def main() -> int:
    folder = pathlib.Path(sys.argv[1])
    runs = sorted(folder.glob("run-*.txt"), key=lambda p: int(p.stem.split("-")[1]))
    groups: dict[str, dict] = {}
    failed_runs = 0
    for run in runs:
        text = run.read_text(errors="replace")
        found = failures(text)
        failed_runs += bool(found)
        for test, first, detail in found:
            g = groups.setdefault(signature(test, first), {"runs": [], "first": detail})
            g["runs"].append(run.stem.split("-")[1])
    print(f"== repeat-tests report: {len(runs)} runs, {failed_runs} failed, "
          f"{len(groups)} signatures")
    # Each run's last line: its exit code, the cores and the load average after it.
    for run in runs:
        ends = [l for l in run.read_text(errors="replace").splitlines() if l.startswith("== run ")]
        if ends:
            print(ends[-1])
    for sig, g in sorted(groups.items()):
        print(f"-- {len(g['runs'])} x {sig} (runs {', '.join(g['runs'])})")
        print("    " + g["first"].replace("\n", "\n    "))
    return 1 if failed_runs else 0


if __name__ == "__main__":
    sys.exit(main())
