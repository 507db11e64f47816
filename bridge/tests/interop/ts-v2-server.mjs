// A 2026-07-28 upstream server that we did not write: the TypeScript SDK v2 server
// (@modelcontextprotocol/server, pinned in package.json; research/peers.md §2.3) on stdio with
// serveStdio, modern era only (`legacy: 'reject'`: the bridge must open with server/discover,
// as a 2026-07-28 client). Its tools:
// - `weather` (M2, driver.mjs --v2-upstream) answers with an InputRequiredResult that asks for
//   a form (the city) until the retry carries the answer;
// - `hide_extra` (M3, list_change.mjs) removes the tool `extra`; the SDK then writes
//   notifications/tools/list_changed to each listen stream before the result of the call.
//
// node ts-v2-server.mjs
import { McpServer, inputRequired, acceptedContent } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

serveStdio(
  () => {
    const server = new McpServer(
      { name: 'ts-v2-server', version: '2.4.0-interop' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.registerTool('weather', { inputSchema: z.object({}) }, async (_args, ctx) => {
      const schema = z.object({ city: z.string() });
      const got = acceptedContent(ctx.mcpReq.inputResponses, 'city', schema);
      if (!got) {
        return inputRequired({
          inputRequests: { city: inputRequired.elicit({ message: 'Which city?', requestedSchema: schema }) },
        });
      }
      return { content: [{ type: 'text', text: `sunny in ${got.city}` }] };
    });
    const extra = server.registerTool(
      'extra',
      { description: 'A tool that hide_extra removes', inputSchema: z.object({}) },
      async () => ({ content: [{ type: 'text', text: 'extra' }] }),
    );
    server.registerTool(
      'hide_extra',
      { description: 'Removes the tool extra', inputSchema: z.object({}) },
      async () => {
        extra.remove();
        return { content: [{ type: 'text', text: 'extra removed' }] };
      },
    );
    return server;
  },
  { legacy: 'reject' },
);
