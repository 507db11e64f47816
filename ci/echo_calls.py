#!/usr/bin/env python3
"""N `tools/call echo` round trips through a bridge, one at a time, for counting what one
echo costs the bridge under valgrind (docs/benchmarks.md, "Allocations and instructions per
echo"): run it with N and with N + 1000 and divide the difference by 1000, so that the start
and the stop cancel out.

    python3 ci/echo_calls.py N COMMAND...   # COMMAND: the bridge and its upstream command
"""
import json
import subprocess
import sys


def main() -> None:
    n, command = int(sys.argv[1]), sys.argv[2:]
    bridge = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)

    def send(message: dict) -> None:
        bridge.stdin.write((json.dumps(message) + "\n").encode())
        bridge.stdin.flush()

    def answer(request_id: int) -> None:
        while True:
            line = bridge.stdout.readline()
            if not line:
                sys.exit("the bridge closed its stdout")
            message = json.loads(line)
            if message.get("id") == request_id:
                if "error" in message:
                    sys.exit(f"request {request_id} failed: {message['error']}")
                return

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "echo-calls", "version": "1"}}})
    answer(0)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i in range(1, n + 1):
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "echo", "arguments": {"text": "hello"}}})
        answer(i)
    bridge.stdin.close()
    sys.exit(bridge.wait())


if __name__ == "__main__":
    main()
