// Interop of mcp-bridge-vscode with a 2025-11-25 client that we did not write: the
// TypeScript SDK v1 (@modelcontextprotocol/sdk, pinned in package.json).
//
// node driver.mjs <bridge> <fixture>
// node driver.mjs <bridge> --v2-upstream
//   (M2) the upstream is ts-v2-server.mjs (the TypeScript SDK v2 server): the client calls its
//   tool weather, answers its form with Paris, and gets "sunny in Paris".
// node driver.mjs --embedded <fixture>
//   (M5) starts `<fixture> --embedded` directly: the bridge inside the fixture's process.
// Starts `<bridge> -- <fixture>` with StdioClientTransport, lists the tools, calls add (5),
// gets the prompt greet, reads the resource, answers the form of ask_form (M2: the input
// rounds of the bridge, R8, O1), and closes. Prints one JSON line of results;
// any failure throws (exit code 1).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [bridge, fixture] = process.argv.slice(2);
const v2 = fixture === '--v2-upstream';
const embedded = bridge === '--embedded';
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
const upstreamArgs = v2
  ? ['--', process.execPath, new URL('./ts-v2-server.mjs', import.meta.url).pathname]
  : ['--', fixture];
const transport = embedded
  ? new StdioClientTransport({ command: fixture, args: ['--embedded'], stderr: 'inherit' })
  : new StdioClientTransport({ command: bridge, args: upstreamArgs, stderr: 'inherit' });
// M2: the SDK validates the bridge's elicitation/create against its 2025-11-25 schema before
// this handler runs; the handler records what it saw and accepts with a name.
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push(request.params);
  return { action: 'accept', content: v2 ? { city: 'Paris' } : { name: 'Ada' } };
});
await client.connect(transport);

if (v2) {
  const weather = await client.callTool({ name: 'weather', arguments: {} });
  const text = weather.content?.[0]?.text;
  check(asked.length === 1 && asked[0].message === 'Which city?', `the form asked: ${JSON.stringify(asked)}`);
  check(text === 'sunny in Paris', `weather gives ${JSON.stringify(weather)}`);
  await client.close();
  console.log(JSON.stringify({ weather: text }));
  process.exit(0);
}

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

const form = await client.callTool({ name: 'ask_form', arguments: {} });
const formText = form.content?.[0]?.text;
check(asked.length === 1 && asked[0].message === 'Tell us about you.', `the form asked: ${JSON.stringify(asked)}`);
check(typeof formText === 'string' && formText.startsWith('form: accept') && formText.includes('Ada'), `ask_form gives ${formText}`);

await client.close();
console.log(JSON.stringify({ tools: tools.length, add: add.content[0].text, greeting, notes, form: formText }));
