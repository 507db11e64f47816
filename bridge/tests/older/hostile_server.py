"""A hostile MCP server of revision 2025-11-25 on stdio (only Python's standard library), for
the bounds of L3 and O1 (bridge/tests/it/older_hostile.rs).

After `notifications/initialized` it completes an elicitation that it never opened, opens a URL
elicitation `srv-1` and completes it twice, then asks `roots/list` 20 times at once. When the
bridge has refused the requests over its limit (an error response for each), it sends
`notifications/tools/list_changed` as the end mark, so that the test knows what VS Code got.
"""

import json
import sys

FLOOD = 20


def send(message):
    message["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def note(method, params):
    send({"method": method, "params": params})


def main():
    refused = 0
    expected_refusals = None
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method == "server/discover":
            send({"id": message["id"], "error": {"code": -32601, "message": "Method not found"}})
        elif method == "initialize":
            send({"id": message["id"], "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }})
        elif method == "notifications/initialized":
            complete = "notifications/elicitation/complete"
            note(complete, {"elicitationId": "never-opened"})
            send({"id": "url-1", "method": "elicitation/create", "params": {
                "mode": "url", "message": "Open it.", "url": "https://example.com/x",
                "elicitationId": "srv-1"}})
            note(complete, {"elicitationId": "srv-1"})
            note(complete, {"elicitationId": "srv-1"})
            for n in range(FLOOD):
                send({"id": n, "method": "roots/list"})
        elif method is None and "error" in message:
            cause = message["error"].get("data", {}).get("cause")
            sys.stderr.write(f"hostile: error for {message.get('id')}: {cause}\n")
            sys.stderr.flush()
            if cause == "too_many_input_requests":
                refused += 1
                # The URL elicitation and 15 roots/list wait: 5 are refused.
                if refused == FLOOD - 15:
                    note("notifications/tools/list_changed", {})
        elif "id" in message and method is not None:
            send({"id": message["id"], "result": {"tools": []}})


main()
