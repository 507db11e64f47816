// Interop of the listen stream (M3, O6 and the quirk on tool re-listing): the TypeScript SDK
// v1 client (2025-11-25) talks to the bridge, which runs the TypeScript SDK v2 server
// (2026-07-28, ts-v2-server.mjs) as its upstream. A tool that changes the tool list must give
// the client notifications/tools/list_changed before its result.
//
// node list_change.mjs <bridge>
// Prints one JSON line of results; any failure throws (exit code 1).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { fileURLToPath } from 'node:url';

const [bridge] = process.argv.slice(2);
if (!bridge) {
  console.error('usage: node list_change.mjs <bridge>');
  process.exit(2);
}
const server = fileURLToPath(new URL('./ts-v2-server.mjs', import.meta.url));

function check(condition, what) {
  if (!condition) throw new Error(`interop check failed: ${what}`);
}

const events = [];
let waiting;
const client = new Client(
  { name: 'Visual Studio Code', version: '1.141.0-interop' },
  { capabilities: { roots: { listChanged: true } } },
);
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  events.push('list_changed');
  if (waiting) waiting();
});
const transport = new StdioClientTransport({
  command: bridge,
  args: ['--', process.execPath, server],
  stderr: 'inherit',
});
await client.connect(transport);
check(client.getServerVersion()?.name === 'ts-v2-server', 'serverInfo.name');
check(client.getServerCapabilities()?.tools?.listChanged === true, 'tools.listChanged');

// The gap replay after the acknowledgment of the first listen stream (bounded wait).
let timer;
await new Promise((resolve, reject) => {
  if (events.length > 0) return resolve();
  waiting = resolve;
  timer = setTimeout(() => reject(new Error('no list change after notifications/initialized in 10 s')), 10000);
});
clearTimeout(timer);
waiting = undefined;
events.length = 0;

// The tools of this test: the server's tool `weather` is the one of driver.mjs (M2).
const names = async () =>
  (await client.listTools()).tools
    .map((t) => t.name)
    .filter((name) => name !== 'weather')
    .sort();
const before = await names();
check(before.includes('extra'), `extra is listed: ${before}`);
const result = await client.callTool({ name: 'hide_extra', arguments: {} });
events.push('result');
check(result.content?.[0]?.text === 'extra removed', `hide_extra gives ${JSON.stringify(result)}`);
check(events[0] === 'list_changed' && events.at(-1) === 'result', `order ${events}`);
const after = await names();
check(!after.includes('extra'), `extra is gone: ${after}`);

await client.close();
console.log(JSON.stringify({ events, before, after }));
