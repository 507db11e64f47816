// A 2026-07-28 upstream at a URL that we did not write: the TypeScript SDK v2 server
// (@modelcontextprotocol/server, pinned in package.json) through its `createMcpHandler`
// (a fetch-style handler), served by a small node:http adapter, modern era only
// (`legacy: 'reject'`). For the interop tests of the bridge's URL form.
//
// node ts-v2-http-server.mjs
//
// - binds 127.0.0.1 on a free port; the first line on stdout is exactly
//   `listening http://127.0.0.1:<port>/mcp`; other paths get 404;
// - exits when its stdin ends (a test that closes the pipe leaves no process);
// - tools: `add` ({a, b} → the sum as text), `weather` (an InputRequiredResult with a form
//   elicitation `city` until the retry carries the accepted answer, then `sunny in <city>`;
//   a declined or cancelled answer gives the error result `no city`),
//   `progress` (three notifications/progress for the request's progress token, then `done`),
//   `slow` (answers `slow done` after 60 s: a call in flight; closing its response stream
//   cancels it, and the server writes `ts-v2-http-server: slow cancelled` on stderr).
//
// What it answers (observed with curl; POST with `Accept: application/json, text/event-stream`,
// `Content-Type: application/json`, `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method: <method>`,
// `Mcp-Name: <tool>` for tools/call, and the `_meta` envelope in the params):
// - server/discover, tools/list, a plain tools/call and an input_required round: HTTP 200,
//   `content-type: application/json`, one JSON-RPC response; never an Mcp-Session-Id. Every
//   result carries `resultType` and `_meta["io.modelcontextprotocol/serverInfo"]`; discover
//   gives `supportedVersions: ["2026-07-28"]`, `ttlMs: 0`, `cacheScope: "private"`.
// - The input round: `resultType: "input_required"`, `inputRequests.city` =
//   `{method: "elicitation/create", params: {message, requestedSchema, mode: "form"}}` (the
//   schema carries `$schema`), no requestState; the retry sends `inputResponses.city` =
//   `{action: "accept", content: {city}}` (a bare ElicitResult).
// - tools/call with `_meta.progressToken` on a tool that notifies: HTTP 200
//   `text/event-stream`, `event: message` + `data: <message>` per message (the progress
//   notifications, then the response), then the stream ends. It streams even when Accept names
//   only application/json, and answers JSON when Accept names only text/event-stream: Accept
//   is not checked.
// - subscriptions/listen: HTTP 200 `text/event-stream`, first event
//   notifications/subscriptions/acknowledged with `_meta["io.modelcontextprotocol/subscriptionId"]`
//   equal to the request id; the stream stays open.
// - Mcp-Method, Mcp-Name (tools/call) or MCP-Protocol-Version missing or different from the
//   body: HTTP 400, JSON-RPC error -32020 "Bad Request: the request headers and body
//   disagree: …" with `data.mismatch`. Envelope missing under a 2026-07-28 header: 400 -32602.
//   No header and no envelope (an initialize): 400 -32022 with `data.supported`. Content-Type
//   not JSON: 415. GET or DELETE: 405. A notification: 202 with no body. An unknown tool: HTTP
//   200 with JSON-RPC error -32602; arguments that fail the schema: a result with isError.
import http from 'node:http';
import { McpServer, createMcpHandler, inputRequired, acceptedContent } from '@modelcontextprotocol/server';
import * as z from 'zod';

function server() {
  const s = new McpServer({ name: 'ts-v2-http-server', version: '2.4.0-interop' }, { capabilities: { tools: {} } });
  s.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  s.registerTool(
    'weather',
    { description: 'Asks for a city through a form, and gives its weather', inputSchema: z.object({}) },
    async (_args, ctx) => {
      const schema = z.object({ city: z.string() });
      const answer = ctx.mcpReq.inputResponses?.city;
      if (answer !== undefined && answer.action !== 'accept') {
        return { content: [{ type: 'text', text: 'no city' }], isError: true };
      }
      const got = acceptedContent(ctx.mcpReq.inputResponses, 'city', schema);
      if (!got) {
        return inputRequired({
          inputRequests: { city: inputRequired.elicit({ message: 'Which city?', requestedSchema: schema }) },
        });
      }
      return { content: [{ type: 'text', text: `sunny in ${got.city}` }] };
    },
  );
  s.registerTool(
    'progress',
    { description: 'Sends three progress notifications, then answers done', inputSchema: z.object({}) },
    async (_args, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      if (progressToken !== undefined) {
        for (let progress = 1; progress <= 3; progress++) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 3 } });
        }
      }
      return { content: [{ type: 'text', text: 'done' }] };
    },
  );
  s.registerTool(
    'slow',
    { description: 'Answers after 60 s, or never when cancelled', inputSchema: z.object({}) },
    async (_args, ctx) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve({ content: [{ type: 'text', text: 'slow done' }] }), 60_000);
        ctx.mcpReq.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          console.error('ts-v2-http-server: slow cancelled');
          reject(new Error('cancelled'));
        });
      }),
  );
  return s;
}

const handler = createMcpHandler(server, { legacy: 'reject' });

// node:http → fetch Request → handler → node:http. The response body is streamed as it comes
// (SSE), and a client that goes away aborts the request.
const listener = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (url.pathname !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  try {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (Array.isArray(value)) value.forEach((v) => headers.append(name, v));
      else if (value !== undefined) headers.set(name, value);
    }
    const request = new Request(new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`), {
      method: req.method,
      headers,
      body,
      signal: abort.signal,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
      for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
  } catch (error) {
    if (!res.headersSent) res.writeHead(500);
    res.end();
    if (!abort.signal.aborted) console.error(`ts-v2-http-server: ${error}`);
  }
});

listener.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${listener.address().port}/mcp\n`);
});

// The end of stdin stops the server at once, open streams included.
process.stdin.on('data', () => {});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
