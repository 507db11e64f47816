"""A FastMCP server of the Python SDK 1.30 (revision 2025-11-25) on stdio, or with `--http` over
Streamable HTTP, the older upstream of the process tests in bridge/tests/it/older_upstream.rs
and older_upstream_url.rs. Its tools use the SDK's own
machinery: a form elicitation, progress, a list change, sampling, roots, a cancelled call
and a crash."""

import os
import sys

import anyio
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.streamable_http import EventMessage, EventStore
from pydantic import BaseModel

class MemoryEvents(EventStore):
    """Every event of the process, for the replay after a GET with Last-Event-ID (HTTP only):
    with an event store the SDK primes each stream with an event id and lets a tool close its
    stream early (`ctx.close_sse_stream`, the polling of 2025-11-25)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, object]] = []

    async def store_event(self, stream_id, message):
        event_id = str(len(self.events) + 1)
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id, send_callback):
        ids = [event_id for event_id, _, _ in self.events]
        if last_event_id not in ids:
            return None
        at = ids.index(last_event_id)
        stream_id = self.events[at][1]
        for event_id, stream, message in self.events[at + 1:]:
            if stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


mcp = FastMCP("py-older", event_store=MemoryEvents(), retry_interval=100)


class Name(BaseModel):
    name: str


@mcp.tool()
def add(a: int, b: int) -> str:
    """Adds two numbers."""
    return str(a + b)


@mcp.tool()
async def ask_name(ctx: Context) -> str:
    """Asks the user for a name with a form."""
    answer = await ctx.elicit(message="Your name?", schema=Name)
    if answer.action == "accept":
        return f"hello {answer.data.name}"
    return f"no name ({answer.action})"


@mcp.tool()
async def poll(ctx: Context) -> str:
    """Reports progress, closes its event stream (over HTTP: the client reads on with a GET and
    Last-Event-ID), reports progress again, and answers."""
    await ctx.report_progress(1, 2)
    await ctx.close_sse_stream()
    await anyio.sleep(0.2)
    await ctx.report_progress(2, 2)
    return "polled"


@mcp.tool()
async def slow(ctx: Context) -> str:
    """Reports progress twice, then answers."""
    await ctx.report_progress(1, 2)
    await ctx.report_progress(2, 2)
    return "done"


def extra() -> str:
    """The tool that toggle adds."""
    return "extra"


@mcp.tool()
async def toggle(ctx: Context) -> str:
    """Adds the tool extra and tells the client that the list changed."""
    mcp.add_tool(extra)
    await ctx.session.send_tool_list_changed()
    return "toggled"


@mcp.tool()
async def sample(ctx: Context) -> str:
    """Asks the client to sample."""
    from mcp.types import SamplingMessage, TextContent

    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text="hi"))],
        max_tokens=10,
    )
    return f"sampled: {result.content.text}"


@mcp.tool()
async def roots(ctx: Context) -> str:
    """Lists the roots of the client."""
    result = await ctx.session.list_roots()
    return " ".join(str(r.uri) for r in result.roots)


@mcp.tool()
async def wait(ctx: Context) -> str:
    """Reports progress once, then waits until the client cancels the call."""
    await ctx.report_progress(0, 1)
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        print("py-older: wait cancelled", file=sys.stderr, flush=True)
        raise
    return "not cancelled"


@mcp.tool()
def crash() -> str:
    """Ends the server with exit code 3."""
    os._exit(3)


def serve_http() -> None:
    """Streamable HTTP with sessions on a free port of 127.0.0.1: prints
    `listening http://127.0.0.1:<port>/mcp` first, and exits at the end of stdin."""
    import socket
    import threading

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    # Listening before the line is printed: a client that connects at once waits in the
    # backlog until uvicorn accepts, instead of being refused.
    sock.listen(128)
    port = sock.getsockname()[1]

    def end_at_eof() -> None:
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=end_at_eof, daemon=True).start()
    print(f"listening http://127.0.0.1:{port}/mcp", flush=True)
    config = uvicorn.Config(mcp.streamable_http_app(), log_level="warning")
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    if "--http" in sys.argv:
        serve_http()
    else:
        mcp.run()
