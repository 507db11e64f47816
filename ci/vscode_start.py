#!/usr/bin/env python3
"""Starts one command the way VS Code starts an MCP server of `mcp.json` ("type": "stdio"):
`command` plus `args`, no shell, stdin, stdout and stderr on pipes. It sends VS Code's
`initialize` and checks the answer (a 2025-11-25 result with serverInfo and capabilities),
sends `notifications/initialized`, then runs VS Code's stop: the end of stdin, after which the
process must exit with code 0 (R7 in docs/rules.md); the answer follows R1.

    python3 ci/vscode_start.py [--cwd DIR] [--env K=V]... [--native PATH] [--tree]
                               [--no-node-below] [--term-first] -- CMD ARGS...

--native PATH  the started process must be the native binary PATH resolves to (its
               /proc/<pid>/exe), a direct child of this process: no launcher in between.
--tree         prints each process from the started one down to the bridge, with its
               executable and its proportional set size (Pss of /proc/<pid>/smaps_rollup),
               measured while the bridge is idle after initialize.
--no-node-below  no Node process among the descendants of the started process (the command
               that `npx` runs is the native bridge, not the launcher of the npm package).
--term-first   stops with SIGTERM to the started process alone (as VS Code builds that kill
               the direct child only do) instead of the end of stdin: it must die of SIGTERM
               (VS Code's "code null": the bridge has no handler, R7), and every process of its
               tree must end within the bound (a launcher forwards the signal).
Exit code 0 when every check passed, 1 otherwise (the cause on stderr).
"""

import argparse
import json
import os
import queue
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "roots": {"listChanged": True},
            "sampling": {},
            "elicitation": {"form": {}, "url": {}},
        },
        "clientInfo": {"name": "Visual Studio Code", "version": "1.141.0"},
    },
}
# The bound of each wait: VS Code's own initialize wait is unbounded (it logs every 5 s), but
# `npx`/`uvx` may unpack a package first; the stop gets VS Code's 20 s before its forced kill.
ANSWER_BOUND_S = 120
STOP_BOUND_S = 20


def fail(msg):
    print(f"vscode_start: {msg}", file=sys.stderr)
    sys.exit(1)


def pss_kb(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def exe(pid):
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return "?"


def children(pid):
    kids = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids += [int(k) for k in f.read().split()]
    except OSError:
        pass
    return kids


def chain(pid):
    """The started process and its descendants, parents first."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo += children(p)
    return out


def read_lines(stream, q):
    for line in stream:
        q.put(line)
    q.put(None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cwd")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--native")
    ap.add_argument("--tree", action="store_true")
    ap.add_argument("--no-node-below", action="store_true")
    ap.add_argument("--term-first", action="store_true")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    argv = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not argv:
        fail("no command after --")
    env = dict(os.environ)
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v
    err = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=a.cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
        )
    except OSError as e:
        fail(f"cannot start {argv[0]}: {e}")
    lines = queue.Queue()
    threading.Thread(target=read_lines, args=(proc.stdout, lines), daemon=True).start()
    ok = False
    try:
        check(a, argv, proc, lines)
        ok = True
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if not ok:
            err.seek(0)
            sys.stderr.write(err.read().decode(errors="replace")[-4000:])


def check(a, argv, proc, lines):
    proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    proc.stdin.flush()
    try:
        line = lines.get(timeout=ANSWER_BOUND_S)
    except queue.Empty:
        fail(f"{argv[0]}: no answer to initialize in {ANSWER_BOUND_S} s")
    if line is None:
        fail(f"{argv[0]}: stdout ended before the answer to initialize (exit {proc.wait()})")
    try:
        answer = json.loads(line)
    except ValueError:
        fail(f"{argv[0]}: the first stdout line is not JSON: {line[:200]!r}")
    result = answer.get("result") if isinstance(answer, dict) else None
    if answer.get("id") != 1 or not isinstance(result, dict):
        fail(f"{argv[0]}: not a result for id 1: {line[:300]!r}")
    if result.get("protocolVersion") != "2025-11-25":
        fail(f"{argv[0]}: protocolVersion {result.get('protocolVersion')!r}, not 2025-11-25")
    info = result.get("serverInfo") or {}
    if not info.get("name") or not isinstance(result.get("capabilities"), dict):
        fail(f"{argv[0]}: the result has no serverInfo.name or no capabilities")
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    proc.stdin.flush()
    print(f"initialize answered by {info['name']} {info.get('version', '')}".rstrip())
    if a.tree:
        for p in chain(proc.pid):
            kb = pss_kb(p)
            print(f"  pid {p} {exe(p)}: Pss {kb if kb is not None else '?'} kB")
    if a.no_node_below:
        below = [(p, exe(p)) for p in chain(proc.pid)[1:]]
        nodes = [f"pid {p} ({path})" for p, path in below if os.path.basename(path) == "node"]
        if nodes:
            fail(f"a Node process below {argv[0]}: {', '.join(nodes)}")
        print(f"no Node process below {argv[0]} ({len(below)} descendants)")
    if a.native:
        want = os.path.realpath(a.native)
        if exe(proc.pid) != want:
            fail(f"the started process is {exe(proc.pid)}, not the native binary {want}")
        print(f"no launcher: pid {proc.pid} is {want}, a child of pid {os.getpid()}")
    if a.term_first:
        term_first(argv, proc)
        return
    proc.stdin.close()
    try:
        code = proc.wait(timeout=STOP_BOUND_S)
    except subprocess.TimeoutExpired:
        fail(f"{argv[0]}: still running {STOP_BOUND_S} s after the end of stdin")
    if code != 0:
        fail(f"{argv[0]}: exit code {code} after the end of stdin, not 0")


def term_first(argv, proc):
    """SIGTERM to the started process alone; then its whole tree must end in the bound."""
    watched = []
    for p in chain(proc.pid):
        try:
            watched.append((p, exe(p), os.pidfd_open(p)))
        except ProcessLookupError:
            pass
    os.kill(proc.pid, signal.SIGTERM)
    try:
        code = proc.wait(timeout=STOP_BOUND_S)
    except subprocess.TimeoutExpired:
        fail(f"{argv[0]}: still running {STOP_BOUND_S} s after SIGTERM")
    if code != -signal.SIGTERM:
        fail(f"{argv[0]}: after SIGTERM the exit status is {code}, not death by SIGTERM")
    deadline = time.monotonic() + STOP_BOUND_S
    for p, path, fd in watched:
        # A pidfd is readable once its process has ended: a wait with a bound, no polling.
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        os.close(fd)
        if not ready:
            fail(f"pid {p} ({path}) still runs {STOP_BOUND_S} s after SIGTERM to pid {proc.pid}")
    rest = len(watched) - 1
    print(f"SIGTERM to pid {proc.pid} alone: it died of it, and its {rest} descendants ended")


if __name__ == "__main__":
    main()
