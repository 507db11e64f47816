'use strict';
// postinstall: where it can, puts the native binary in place of each bin script, so that
// `npx mcp-bridge-vscode` (and node_modules/.bin/…) execs the bridge itself and no Node
// process stands between VS Code and the bridge. A hard link where the file system allows
// it, else a copy. Not on Windows (npm's .cmd shims call node on the bin script) and not
// under other package managers (their shims are written for a script); there the launcher
// of lib/launch.js runs the binary with inherited stdio.
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const { nativeBinary, version } = require('./lib/platform');

const NAMES = ['mcp-bridge-vscode', 'mcp-bridge-harness', 'bridge-fixture-server'];

function underNpm() {
  return (process.env.npm_config_user_agent || '').startsWith('npm/');
}

function replace(name) {
  // The platform package of this package's own dependency, with the SHA-256 recorded at pack
  // time (lib/platform.js); else nothing runs, and the launcher stays to say why.
  const native = nativeBinary(name);
  if (native instanceof Error) throw native;
  const bin = path.join(__dirname, 'bin', name);
  const script = fs.readFileSync(bin);
  const tmp = `${bin}.tmp`;
  fs.rmSync(tmp, { force: true });
  try {
    fs.linkSync(native, tmp);
  } catch {
    fs.copyFileSync(native, tmp);
  }
  fs.chmodSync(tmp, 0o755);
  fs.renameSync(tmp, bin);
  // A binary that does not run here (a wrong libc, a noexec mount), or that is not of this
  // package's version, must not replace the launcher, which at least says why.
  const want = version(path.join(__dirname, 'package.json'));
  try {
    const out = execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 30000 });
    if (out.trim().split(/\s+/).pop() !== want) throw new Error(`it printed ${out.trim()}, not version ${want}`);
  } catch (e) {
    // Unlink first: writing into `bin` would write through the hard link into the binary.
    fs.rmSync(bin, { force: true });
    fs.writeFileSync(bin, script, { mode: 0o755 });
    throw new Error(`${native} --version failed (${e.message}); the launcher stays`);
  }
}

function main() {
  if (process.platform === 'win32' || !underNpm()) return;
  for (const name of NAMES) {
    try {
      replace(name);
    } catch (e) {
      process.stderr.write(`mcp-bridge-vscode: postinstall: ${e.message}\n`);
      return;
    }
  }
}

main();
