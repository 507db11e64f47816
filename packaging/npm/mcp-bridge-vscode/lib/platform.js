'use strict';
// Where the native binaries of this platform are: the package @mcp-bridge-vscode/<os>-<cpu>,
// installed by npm as an optional dependency of this package (only the one whose `os` and
// `cpu` match the machine).
const path = require('path');

const SCOPE = '@mcp-bridge-vscode';

function platformPackage() {
  return `${SCOPE}/${process.platform}-${process.arch}`;
}

// The path of the native binary `name` (mcp-bridge-vscode, harness, bridge-fixture-server),
// or an Error that says what is missing.
function nativeBinary(name) {
  const pkg = platformPackage();
  const exe = process.platform === 'win32' ? `${name}.exe` : name;
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch (e) {
    return new Error(
      `mcp-bridge-vscode: the package ${pkg} is not installed: this platform has no build, ` +
        'or npm skipped the optional dependencies (--omit=optional, --no-optional); ' +
        'install it with the same version as mcp-bridge-vscode'
    );
  }
  return path.join(dir, 'bin', exe);
}

module.exports = { platformPackage, nativeBinary };
