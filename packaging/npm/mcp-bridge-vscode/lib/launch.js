'use strict';
// The launcher that runs where the postinstall step could not put the native binary in place
// of the bin script (Windows, `npm install --ignore-scripts`, other package managers). It
// never copies stdio: the child inherits this process's stdin, stdout and stderr (the same
// pipes, e.g. VS Code's), so the bridge reads the end of stdin and writes its frames itself.
// This process only waits, forwards the signals it gets, and exits with the child's code or
// dies of the child's signal, so the stop sequence and the exit code stay the bridge's.
const { spawn } = require('child_process');
const { nativeBinary } = require('./platform');

function run(name) {
  const bin = nativeBinary(name);
  if (bin instanceof Error) {
    process.stderr.write(`${bin.message}\n`);
    process.exit(1);
  }
  const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit', windowsHide: true });
  const forward = (signal) => {
    // On Windows Ctrl+C reaches every process of the console, the child included: wait for
    // it instead of terminating it.
    if (process.platform !== 'win32' || signal !== 'SIGINT') child.kill(signal);
  };
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, forward);
  child.on('error', (e) => {
    process.stderr.write(`mcp-bridge-vscode: cannot start ${bin}: ${e.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      for (const s of signals) process.removeListener(s, forward);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

module.exports = { run };
