// An older upstream server (revision 2025-11-25): the TypeScript SDK v1
// (@modelcontextprotocol/sdk, McpServer), for the process tests in
// bridge/tests/it/older_upstream.rs (stdio) and older_upstream_url.rs (`--http`). Its tools use
// the SDK's own machinery: a form elicitation (elicitInput) and a list change (a tool
// registered after the start).
//
// node ts-v1-server.mjs           StdioServerTransport
// node ts-v1-server.mjs --http    Streamable HTTP with sessions (StreamableHTTPServerTransport,
//                                 one McpServer a session, as the SDK's own examples do): binds
//                                 127.0.0.1 on a free port, prints exactly
//                                 `listening http://127.0.0.1:<port>/mcp` once it listens, and
//                                 exits when its stdin ends. A POST without a session that is
//                                 not `initialize` (server/discover) gets 400; an unknown
//                                 session 404; other paths 404.
import http from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

function makeServer() {
  const server = new McpServer({ name: "ts-v1-older", version: "1.32.2" });

  server.registerTool(
    "add",
    { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );

  server.registerTool("ask_name", { description: "Asks for a name with a form" }, async () => {
    const answer = await server.server.elicitInput({
      message: "Your name?",
      requestedSchema: {
        type: "object",
        properties: { name: { type: "string" } },
        required: ["name"],
      },
    });
    const text = answer.action === "accept" ? `hello ${answer.content.name}` : `no name (${answer.action})`;
    return { content: [{ type: "text", text }] };
  });

  server.registerTool("toggle", { description: "Adds the tool extra" }, async () => {
    // The SDK sends notifications/tools/list_changed when a tool is registered after connect.
    server.registerTool("extra", { description: "Added by toggle" }, async () => ({
      content: [{ type: "text", text: "extra" }],
    }));
    return { content: [{ type: "text", text: "toggled" }] };
  });
  return server;
}

function refuse(res, status, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function serveHttp() {
  const sessions = new Map();
  const listener = http.createServer(async (req, res) => {
    try {
      if (new URL(req.url, "http://127.0.0.1").pathname !== "/mcp") return refuse(res, 404, "Not Found");
      const body = req.method === "POST" ? await readJson(req) : undefined;
      const id = req.headers["mcp-session-id"];
      let transport = id === undefined ? undefined : sessions.get(id);
      if (transport === undefined) {
        if (id !== undefined) return refuse(res, 404, "Session not found");
        if (req.method !== "POST" || !isInitializeRequest(body)) {
          return refuse(res, 400, "Bad Request: No valid session ID provided");
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => sessions.set(sid, transport),
        });
        transport.onclose = () => sessions.delete(transport.sessionId);
        await makeServer().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (e) {
      process.stderr.write(`ts-v1-older: ${e}\n`);
      if (!res.headersSent) refuse(res, 400, "Bad Request");
    }
  });
  listener.listen(0, "127.0.0.1", () => {
    console.log(`listening http://127.0.0.1:${listener.address().port}/mcp`);
  });
  process.stdin.on("end", () => process.exit(0));
  process.stdin.resume();
}

if (process.argv.includes("--http")) {
  serveHttp();
} else {
  await makeServer().connect(new StdioServerTransport());
}
