// A second, independent 2026-07-28 upstream for the interop test of M2: the TypeScript SDK v2
// server (@modelcontextprotocol/server, pinned in package.json; research/peers.md §2.3) on
// stdio. Its tool `weather` answers with an InputRequiredResult that asks for a form (the city)
// until the retry carries the answer. `legacy: 'reject'`: the bridge must open with
// server/discover, as a 2026-07-28 client.
import { McpServer, inputRequired, acceptedContent } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

serveStdio(
  () => {
    const server = new McpServer({ name: 'ts-v2-upstream', version: '2.4.0' }, { capabilities: { tools: {} } });
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
    return server;
  },
  { legacy: 'reject' },
);
