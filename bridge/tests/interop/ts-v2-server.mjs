// A 2026-07-28 upstream server that we did not write: the TypeScript SDK v2 server
// (@modelcontextprotocol/server, pinned in package.json) on stdio with serveStdio, modern era
// only. Its tool `hide_extra` removes the tool `extra`; the SDK then writes
// notifications/tools/list_changed to each listen stream before the result of the call.
//
// node ts-v2-server.mjs
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

serveStdio(
  () => {
    const server = new McpServer(
      { name: 'ts-v2-server', version: '2.4.0-interop' },
      { capabilities: { tools: { listChanged: true } } },
    );
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
