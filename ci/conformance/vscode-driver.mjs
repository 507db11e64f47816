// The client under test of the conformance suite's client scenarios: the suite starts
// `node vscode-driver.mjs <bridge> <url>`; this starts `<bridge> <url>` (the bridge's URL form,
// a Streamable HTTP client of revision 2026-07-28 toward the suite's scenario server) and plays
// VS Code (revision 2025-11-25) on the bridge's stdin: initialize, notifications/initialized,
// the lists, then a call of each tool (the arguments of MCP_CONFORMANCE_CONTEXT's toolCalls
// when the scenario gives them, else minimal arguments from the input schema), a read of each
// resource and a get of each prompt. It answers the bridge's elicitation, sampling and roots
// requests as a user who accepts. Exit 0 when the session ran, 1 otherwise.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const argv = process.argv.slice(2);
const url = argv.pop();
const [bridge, ...bridgeArgs] = argv;
if (!bridge || !url) {
  console.error('usage: node vscode-driver.mjs <bridge> [args...] <url>');
  process.exit(2);
}
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
const log = (text) => console.error(`[driver] ${text}`);

const child = spawn(bridge, [...bridgeArgs, url], { stdio: ['pipe', 'pipe', 'inherit'] });
const deadline = setTimeout(() => {
  log('timed out after 20 s');
  child.kill('SIGKILL');
  process.exit(1);
}, 20_000);
child.on('exit', (code, signal) => log(`the bridge exited (${code ?? signal})`));

let nextId = 1;
const pending = new Map();
const send = (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
const request = (method, params) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject, method });
    send({ id, method, ...(params === undefined ? {} : { params }) });
  });

/** A value of a JSON schema, for a form or for tool arguments. */
function sample(schema = {}) {
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.oneOf) && schema.oneOf[0]?.const !== undefined) return schema.oneOf[0].const;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object': {
      const out = {};
      for (const name of schema.required ?? []) out[name] = sample(schema.properties?.[name]);
      return out;
    }
    default:
      return 'test';
  }
}

/** VS Code's answers to the requests of the bridge. */
function answer(message) {
  switch (message.method) {
    case 'elicitation/create': {
      const schema = message.params?.requestedSchema;
      return schema ? { action: 'accept', content: sample(schema) } : { action: 'accept' };
    }
    case 'sampling/createMessage':
      return {
        role: 'assistant',
        content: { type: 'text', text: 'A reply of the model.' },
        model: 'test-model',
        stopReason: 'endTurn',
      };
    case 'roots/list':
      return { roots: [{ uri: 'file:///workspace', name: 'workspace' }] };
    case 'ping':
      return {};
    default:
      return undefined;
  }
}

createInterface({ input: child.stdout }).on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    log(`not JSON: ${line}`);
    return;
  }
  if (message.method !== undefined && message.id !== undefined) {
    const result = answer(message);
    if (result === undefined) {
      send({ id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } });
    } else {
      send({ id: message.id, result });
    }
  } else if (message.id !== undefined && pending.has(message.id)) {
    const { resolve, reject, method } = pending.get(message.id);
    pending.delete(message.id);
    if (message.error) reject(new Error(`${method}: ${message.error.code} ${message.error.message}`));
    else resolve(message.result);
  }
});

/** Every page of a list. */
async function all(method, key) {
  const items = [];
  let cursor;
  do {
    const result = await request(method, cursor === undefined ? {} : { cursor });
    items.push(...(result[key] ?? []));
    cursor = result.nextCursor;
  } while (cursor !== undefined);
  return items;
}

async function attempt(what, run) {
  try {
    const result = await run();
    log(`${what}: ${JSON.stringify(result).slice(0, 300)}`);
  } catch (error) {
    log(`${what} failed: ${error.message}`);
  }
}

let status = 0;
try {
  const init = await request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: { listChanged: true } },
    clientInfo: { name: 'Visual Studio Code', version: '1.107.0-conformance' },
  });
  log(`initialize: ${JSON.stringify(init).slice(0, 300)}`);
  send({ method: 'notifications/initialized' });
  const caps = init.capabilities ?? {};
  const tools = caps.tools ? await all('tools/list', 'tools') : [];
  log(`tools: ${tools.map((tool) => tool.name).join(', ')}`);
  const calls = Array.isArray(context.toolCalls)
    ? context.toolCalls
    : tools.map((tool) => ({ name: tool.name, arguments: sample(tool.inputSchema) }));
  for (const call of calls) {
    await attempt(`tools/call ${call.name}`, () => request('tools/call', call));
  }
  if (caps.resources) {
    const resources = await all('resources/list', 'resources');
    for (const resource of resources) {
      await attempt(`resources/read ${resource.uri}`, () => request('resources/read', { uri: resource.uri }));
    }
  }
  if (caps.prompts) {
    const prompts = await all('prompts/list', 'prompts');
    for (const prompt of prompts) {
      const args = Object.fromEntries((prompt.arguments ?? []).map((a) => [a.name, 'test']));
      await attempt(`prompts/get ${prompt.name}`, () => request('prompts/get', { name: prompt.name, arguments: args }));
    }
  }
} catch (error) {
  log(`the session failed: ${error.message}`);
  status = 1;
}
clearTimeout(deadline);
child.stdin.end();
const closed = new Promise((resolve) => child.on('close', resolve));
const grace = setTimeout(() => child.kill('SIGKILL'), 3_000);
await closed;
clearTimeout(grace);
process.exit(status);
