// The client under test of the conformance suite's client scenarios: the suite starts
// `node vscode-driver.mjs [--auth] <bridge> [args...] <url>`; this starts `<bridge> [args...]
// <url>` (the bridge's URL form, a Streamable HTTP client of revision 2026-07-28 toward the
// suite's scenario server) and plays VS Code (revision 2025-11-25) on the bridge's stdin:
// initialize, notifications/initialized, the lists, then a call of each tool (the arguments of
// MCP_CONFORMANCE_CONTEXT's toolCalls when the scenario gives them, else minimal arguments
// from the input schema), a read of each resource and a get of each prompt. It answers the
// bridge's elicitation, sampling and roots requests as a user who accepts. Exit 0 when the
// session ran, 1 otherwise.
//
// With --auth (the authorization scenarios) it also plays the user's browser: the bridge runs
// with a memory token store, without a browser and with a free redirect port, and the driver
// follows each authorization URL that the bridge hands out (the sign-in line on stderr before
// notifications/initialized, a URL elicitation after it) to the bridge's loopback redirect.
// A scenario's pre-registered client (MCP_CONFORMANCE_CONTEXT client_id, client_secret,
// issuer) becomes --client-id and --client-issuer, with the secret in MCP_BRIDGE_CLIENT_SECRET
// (the bridge takes it from nowhere else). The secrets of a sign-in (state, code, PKCE, tokens,
// the client secret) never reach this driver's output: the bridge's stderr is forwarded with
// the values of such parameters cut out (the suite saves that output with the results).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const argv = process.argv.slice(2);
const auth = argv[0] === '--auth';
if (auth) argv.shift();
const url = argv.pop();
const [bridge, ...bridgeArgs] = argv;
if (!bridge || !url) {
  console.error('usage: node vscode-driver.mjs [--auth] <bridge> [args...] <url>');
  process.exit(2);
}
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
const log = (text) => console.error(`[driver] ${text}`);

/** A line without the values of the secret parameters of a sign-in. */
const SECRET_PARAMS =
  /\b(state|code|code_verifier|code_challenge|access_token|refresh_token|id_token|client_secret)=[^&\s"']*/g;
const redact = (line) => line.replace(SECRET_PARAMS, '$1=…');

/** True when nothing listens on `port` of 127.0.0.1 now. */
const canListen = (port) =>
  new Promise((resolve) => {
    const server = createServer();
    server.on('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/** The first port of the system's ephemeral range (Linux; 32768 elsewhere). */
const ephemeralStart = () => {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > 21000 ? first : 32768;
  } catch {
    return 32768;
  }
};

/**
 * A port on 127.0.0.1 for the bridge's redirect receiver, which binds it only when the
 * sign-in starts. The suite runs its scenarios in parallel, and their servers and every
 * outgoing connection take ports of the ephemeral range: a port probed free there was
 * sometimes taken before the bridge bound it (`redirect_port_unavailable`). So the port
 * comes from below that range, and the parallel drivers reserve it among themselves with a
 * file created exclusively in MCP_CONFORMANCE_PORTS (ci/conformance.sh).
 */
const redirectPort = async () => {
  const dir = process.env.MCP_CONFORMANCE_PORTS;
  const low = 20000;
  const high = ephemeralStart();
  for (let attempt = 0; attempt < 500; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (dir) {
      try {
        writeFileSync(join(dir, String(port)), '', { flag: 'wx' });
      } catch {
        continue;
      }
    }
    if (await canListen(port)) return port;
  }
  throw new Error('no free port for the redirect receiver');
};

const env = { ...process.env };
const extra = [];
if (auth) {
  extra.push('--token-store', 'memory', '--no-browser', '--redirect-port', String(await redirectPort()));
  extra.push('--sign-in-timeout', '30');
  if (process.env.MCP_CONFORMANCE_SCENARIO === 'auth/basic-cimd') {
    // The project publishes no client ID metadata document yet, so the bridge uses one only
    // when --client-metadata-url names it (bridge/README.md); this scenario's authorization
    // server expects the URL that the suite's own clients are configured with.
    extra.push('--client-metadata-url', 'https://conformance-test.local/client-metadata.json');
  }
  if (typeof context.client_id === 'string') {
    extra.push('--client-id', context.client_id);
    if (typeof context.issuer === 'string') extra.push('--client-issuer', context.issuer);
    if (typeof context.client_secret === 'string') env.MCP_BRIDGE_CLIENT_SECRET = context.client_secret;
  }
}
// The scenario's context is not for the bridge: it may hold the client secret.
delete env.MCP_CONFORMANCE_CONTEXT;

const child = spawn(bridge, [...extra, ...bridgeArgs, url], {
  stdio: ['pipe', 'pipe', auth ? 'pipe' : 'inherit'],
  env,
});
// A sign-in may take up to its --sign-in-timeout of 30 s before the bridge answers.
const limit = auth ? 45 : 20;
const deadline = setTimeout(() => {
  log(`timed out after ${limit} s`);
  child.kill('SIGKILL');
  process.exit(1);
}, limit * 1000);
child.on('exit', (code, signal) => log(`the bridge exited (${code ?? signal})`));

/** The authorization URLs already followed: the sign-in line and a URL elicitation of the
 * same sign-in name the same URL, and a second visit would only be refused. */
const followed = new Set();

/** The user's browser: the authorization URL, then its redirects, up to the bridge's page. */
async function browse(start) {
  if (followed.has(start)) return;
  followed.add(start);
  let target = start;
  try {
    for (let hop = 0; hop < 5; hop++) {
      const response = await fetch(target, { redirect: 'manual' });
      await response.arrayBuffer();
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) {
        log(`browser: HTTP ${response.status} at ${new URL(target).origin}${new URL(target).pathname}`);
        return;
      }
      target = new URL(location, target).toString();
    }
    log('browser: too many redirects');
  } catch (error) {
    log(`browser: ${redact(String(error.message))}`);
  }
}

const SIGN_IN_LINE = 'mcp-bridge-vscode: sign in at ';
if (auth) {
  createInterface({ input: child.stderr }).on('line', (line) => {
    console.error(redact(line));
    if (line.startsWith(SIGN_IN_LINE)) browse(line.slice(SIGN_IN_LINE.length).trim());
  });
}

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
      if (message.params?.mode === 'url' && typeof message.params.url === 'string') {
        // A sign-in after notifications/initialized: the user accepts and the browser opens.
        setImmediate(() => browse(message.params.url));
        return { action: 'accept' };
      }
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
