// Interop of mcp-bridge-vscode with a 2025-11-25 client that we did not write: the
// TypeScript SDK v1 (@modelcontextprotocol/sdk, pinned in package.json).
//
// node driver.mjs <bridge> <fixture>
// Starts `<bridge> -- <fixture>` with StdioClientTransport, lists the tools, calls add (5),
// gets the prompt greet, reads the resource, and closes. Prints one JSON line of results;
// any failure throws (exit code 1).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [bridge, fixture] = process.argv.slice(2);
if (!bridge || !fixture) {
  console.error('usage: node driver.mjs <bridge> <fixture>');
  process.exit(2);
}

function check(condition, what) {
  if (!condition) throw new Error(`interop check failed: ${what}`);
}

const client = new Client(
  { name: 'Visual Studio Code', version: '1.140.0-interop' },
  { capabilities: { elicitation: { form: {} }, roots: { listChanged: true } } },
);
const transport = new StdioClientTransport({ command: bridge, args: ['--', fixture], stderr: 'inherit' });
await client.connect(transport);

const info = client.getServerVersion();
check(info?.name === 'bridge-fixture-server', `serverInfo.name is ${info?.name}`);
check(client.getServerCapabilities()?.tools, 'the tools capability');

// listTools validates each result with the SDK's zod schemas (2025-11-25).
let tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : undefined);
  tools = tools.concat(page.tools);
  cursor = page.nextCursor;
} while (cursor);
check(tools.some((t) => t.name === 'add'), 'add is listed');

const add = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
check(add.content?.[0]?.text === '5', `add gives ${JSON.stringify(add.content)}`);

const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'VS Code' } });
const greeting = prompt.messages?.[0]?.content?.text;
check(greeting === 'Hello, VS Code.', `greet gives ${greeting}`);

const resource = await client.readResource({ uri: 'file:///fixture/notes.txt' });
const notes = resource.contents?.[0]?.text;
check(typeof notes === 'string' && notes.length > 0, 'the resource has text');

await client.close();
console.log(JSON.stringify({ tools: tools.length, add: add.content[0].text, greeting, notes }));
