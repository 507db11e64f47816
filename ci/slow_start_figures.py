#!/usr/bin/env python3
"""The figures of S1 (docs/benchmarks.md, "A slow start"): the time from the spawn of the
bridge to its `initialize` answer and to the first full `tools/list`, for a server that starts
in 30 s and in 70 s (the fixture's --start-delay), as VS Code's Local harness and as the
Copilot harness open (the Copilot harness sends `server/discover` first), with the bridge's
early answer (its default) and without it (`--answer-initialize-after off`).

Usage: python3 ci/slow_start_figures.py [START_S ...]   (default: 30 70; needs target/debug)
"""
import json
import os
import queue
import subprocess
import sys
import threading
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BRIDGE = os.path.join(ROOT, "target", "debug", "mcp-bridge-vscode")
FIXTURE = os.path.join(ROOT, "target", "debug", "bridge-fixture-server")
BUDGET_S = 60.0
GIVE_UP_S = 130.0


def initialize(profile):
    name = "Visual Studio Code" if profile == "local" else "copilot-runtime"
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}, "url": {}}},
            "clientInfo": {"name": name, "version": "1.0"},
        },
    }


def run(start_s, profile, early):
    args = [BRIDGE]
    if not early:
        args += ["--answer-initialize-after", "off"]
    args += ["--", FIXTURE, "--start-delay", str(start_s)]
    spawned = time.monotonic()
    bridge = subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    frames = queue.Queue()

    def read():
        for line in bridge.stdout:
            frames.put(json.loads(line))
        frames.put(None)

    threading.Thread(target=read, daemon=True).start()

    def send(frame):
        bridge.stdin.write((json.dumps(frame) + "\n").encode())
        bridge.stdin.flush()

    def until(pred):
        while True:
            left = GIVE_UP_S - (time.monotonic() - spawned)
            try:
                frame = frames.get(timeout=max(left, 0.01))
            except queue.Empty:
                return None
            if frame is None:
                return None
            if pred(frame):
                return frame

    if profile == "copilot":
        send({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {}})
        until(lambda f: f.get("id") == 0)
    send(initialize(profile))
    answer = until(lambda f: f.get("id") == 1)
    t_init = time.monotonic() - spawned
    outcome = "result" if answer and "result" in answer else "error"
    t_tools = None
    if outcome == "result":
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        next_id = 2
        while t_tools is None and time.monotonic() - spawned < GIVE_UP_S:
            send({"jsonrpc": "2.0", "id": next_id, "method": "tools/list", "params": {}})
            got = until(lambda f, i=next_id: f.get("id") == i)
            tools = (got or {}).get("result", {}).get("tools", [])
            if tools:
                t_tools = time.monotonic() - spawned
                break
            # An empty list before the server is ready: its list change comes when it is.
            until(lambda f: f.get("method") == "notifications/tools/list_changed")
            next_id += 1
    bridge.stdin.close()
    bridge.wait(timeout=30)
    return outcome, t_init, t_tools


def main():
    starts = [float(a) for a in sys.argv[1:]] or [30.0, 70.0]
    print(f"nproc {os.cpu_count()}, load {open('/proc/loadavg').read().split()[:3]}")
    print("| start | client | early answer | `initialize` answered | first full `tools/list` | within the 60 s budget |")
    print("| --- | --- | --- | --- | --- | --- |")
    for start_s in starts:
        for profile in ["local", "copilot"]:
            for early in [True, False]:
                outcome, t_init, t_tools = run(start_s, profile, early)
                init = f"{t_init:.1f} s ({outcome})"
                tools = f"{t_tools:.1f} s" if t_tools is not None else "never"
                ok = "yes" if outcome == "result" and t_init <= BUDGET_S else "no"
                mode = "on (40 s)" if early else "off"
                print(f"| {start_s:g} s | {profile} | {mode} | {init} | {tools} | {ok} |", flush=True)


if __name__ == "__main__":
    main()
