'use strict';
// Where the native binaries of this platform are: the package @mcp-bridge-vscode/<os>-<cpu>
// (<os>-<cpu>-musl on a Linux with musl libc), installed by npm as an optional dependency of
// this package (only the one whose `os`, `cpu` and `libc` match the machine). The binary is
// taken from that package alone, found from this package's own folder, and only when its
// version is this package's: a stale or foreign copy elsewhere is never run.
const fs = require('fs');
const path = require('path');

const SCOPE = '@mcp-bridge-vscode';
const MAIN = path.join(__dirname, '..', 'package.json');

// glibc or musl on Linux (what npm's `libc` field names): Node's report names the glibc it
// runs on; a Node built for musl has none.
function linuxLibc() {
  const header = process.report && process.report.getReport().header;
  return header && header.glibcVersionRuntime ? 'glibc' : 'musl';
}

function platformPackage(libc = process.platform === 'linux' ? linuxLibc() : '') {
  const suffix = libc === 'musl' ? '-musl' : '';
  return `${SCOPE}/${process.platform}-${process.arch}${suffix}`;
}

function version(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8')).version;
}

// The path of the native binary `name` (mcp-bridge-vscode, mcp-bridge-harness,
// bridge-fixture-server), or an Error that says what is missing.
function nativeBinary(name) {
  const libc = process.platform === 'linux' ? linuxLibc() : '';
  const pkg = platformPackage(libc);
  const exe = process.platform === 'win32' ? `${name}.exe` : name;
  const want = version(MAIN);
  let manifest;
  try {
    manifest = require.resolve(`${pkg}/package.json`, { paths: [path.join(__dirname, '..')] });
  } catch (e) {
    const other = libc === 'musl' ? `${SCOPE}/${process.platform}-${process.arch}` : `${pkg}-musl`;
    let hint = '';
    try {
      require.resolve(`${other}/package.json`, { paths: [path.join(__dirname, '..')] });
      hint =
        ` (${other} is installed, but it is built for ${libc === 'musl' ? 'glibc' : 'musl'} ` +
        `and this system has ${libc}: was node_modules installed on another system?)`;
    } catch {
      hint = '';
    }
    return new Error(
      `mcp-bridge-vscode: the package ${pkg} is not installed${hint}: this platform has no ` +
        'build, or npm skipped the optional dependencies (--omit=optional, --no-optional); ' +
        `install ${pkg}@${want}`
    );
  }
  const have = version(manifest);
  if (have !== want) {
    return new Error(
      `mcp-bridge-vscode: ${pkg} is version ${have}, not ${want} (that of mcp-bridge-vscode): ` +
        `install ${pkg}@${want}`
    );
  }
  return path.join(path.dirname(manifest), 'bin', exe);
}

module.exports = { platformPackage, nativeBinary, linuxLibc, version };
