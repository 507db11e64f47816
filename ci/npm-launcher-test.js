'use strict';
// The npm launcher runs only its own platform package's binary (packaging/npm/README.md,
// lib/platform.js): run by ci/dist-npm-test.sh on an install from the tarballs.
//
//   node ci/npm-launcher-test.js <node_modules of an install with --ignore-scripts> <version>
//
// Each case copies that install into a fresh tree, plants a platform package of the same name
// and `version` whose binaries are scripts that leave a mark when they run, and starts the
// launcher (and the install step) as a user would: nothing planted may run, and the error
// names the package to install.
const assert = require('assert');
const { execFileSync, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const test = require('node:test');

const [installed, version] = process.argv.slice(2);
if (!installed || !version) {
  process.stderr.write('usage: node ci/npm-launcher-test.js <node_modules> <version>\n');
  process.exit(2);
}
const main = path.join(installed, 'mcp-bridge-vscode');
const { platformPackage } = require(path.join(main, 'lib', 'platform.js'));
const pkg = platformPackage();
const NAMES = ['mcp-bridge-vscode', 'mcp-bridge-harness', 'bridge-fixture-server'];

// A fresh folder; `node_modules/mcp-bridge-vscode` in its `project/` is a copy of the install's.
function tree() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'npm-launcher-'));
  const project = path.join(root, 'project', 'node_modules');
  fs.mkdirSync(project, { recursive: true });
  fs.cpSync(main, path.join(project, 'mcp-bridge-vscode'), { recursive: true });
  return { root, project, mark: path.join(root, 'ran') };
}

// A platform package `pkg` in `dir` with the `version` field copied from the genuine one and
// binaries that write `mark` when they run and print the version, as the genuine ones do.
function plant(dir, mark) {
  const at = path.join(dir, pkg);
  fs.mkdirSync(path.join(at, 'bin'), { recursive: true });
  fs.copyFileSync(path.join(installed, pkg, 'package.json'), path.join(at, 'package.json'));
  for (const name of NAMES) {
    const bin = path.join(at, 'bin', name);
    fs.writeFileSync(bin, `#!/bin/sh\necho planted >> '${mark}'\necho "${name} ${version}"\n`, { mode: 0o755 });
  }
}

// The launcher of `project` with `env`: its status and stderr.
function launch(project, env = {}) {
  const script = path.join(project, 'mcp-bridge-vscode', 'bin', 'mcp-bridge-vscode');
  const run = spawnSync(process.execPath, [script, '--version'], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  return { status: run.status, stderr: run.stderr, stdout: run.stdout };
}

// The genuine platform package of the install in `project`'s node_modules (a link: the
// binaries are large, and their bytes are what counts).
function genuine(project) {
  fs.mkdirSync(path.dirname(path.join(project, pkg)), { recursive: true });
  fs.symlinkSync(path.join(installed, pkg), path.join(project, pkg), 'dir');
}

function refused(run, mark, words) {
  assert.notStrictEqual(run.status, 0, `the launcher ran: ${run.stdout}`);
  assert.ok(!fs.existsSync(mark), 'a planted binary ran');
  assert.ok(run.stderr.includes(words), run.stderr);
  assert.ok(run.stderr.includes(`install ${pkg}@${version}`), run.stderr);
}

test('the genuine platform package runs', () => {
  const { project } = tree();
  genuine(project);
  const run = launch(project);
  assert.strictEqual(run.status, 0, run.stderr);
  assert.strictEqual(run.stdout.trim(), `mcp-bridge-vscode ${version}`);
});

test('a platform package planted in a node_modules above the project is never found', () => {
  const { root, project, mark } = tree();
  plant(path.join(root, 'node_modules'), mark);
  refused(launch(project), mark, `the package ${pkg} is not installed`);
});

test('a platform package planted in a global folder of Node is never found', () => {
  const { root, project, mark } = tree();
  const home = path.join(root, 'home');
  plant(path.join(home, '.node_modules'), mark);
  plant(path.join(root, 'node-path'), mark);
  const env = { HOME: home, NODE_PATH: path.join(root, 'node-path') };
  refused(launch(project, env), mark, `the package ${pkg} is not installed`);
});

test('a platform package beside the launcher with a copied version field does not run', () => {
  const { project, mark } = tree();
  plant(project, mark);
  refused(launch(project), mark, 'its SHA-256 differs');
});

test('without the checksums of its pack, the launcher runs nothing', () => {
  const { project, mark } = tree();
  genuine(project);
  fs.rmSync(path.join(project, 'mcp-bridge-vscode', 'lib', 'checksums.json'));
  const run = launch(project);
  assert.notStrictEqual(run.status, 0, run.stdout);
  assert.ok(run.stderr.includes(`records no checksum of ${pkg}`), run.stderr);
});

test('the install step neither runs nor links a planted binary', () => {
  const { project, mark } = tree();
  plant(project, mark);
  const dir = path.join(project, 'mcp-bridge-vscode');
  const before = fs.readFileSync(path.join(dir, 'bin', 'mcp-bridge-vscode'));
  const out = execFileSync(process.execPath, ['install.js'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, npm_config_user_agent: 'npm/11.0.0 node/v20' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  assert.strictEqual(out, '');
  assert.ok(!fs.existsSync(mark), 'the install step ran a planted binary');
  assert.ok(before.equals(fs.readFileSync(path.join(dir, 'bin', 'mcp-bridge-vscode'))), 'the launcher was replaced');
});
