'use strict';
// Where the native binaries of this platform are: the package @mcp-bridge-vscode/<os>-<cpu>
// (<os>-<cpu>-musl on a Linux with musl libc), installed by npm as an optional dependency of
// this package (only the one whose `os`, `cpu` and `libc` match the machine).
//
// The package is looked for in the two places where a package manager puts a dependency of
// this package, and nowhere else: this package's own node_modules (a nested install), then
// the node_modules folder that holds this package (npm's hoisting, pnpm's store). Not with
// require.resolve: even with `paths`, Node walks up through every parent node_modules folder
// and adds its global folders ($HOME/.node_modules, $PREFIX/lib/node), where anyone who can
// write above the project could plant a package of the same name. And a binary runs only when
// its SHA-256 is the one that ci/package-npm.sh recorded for it in lib/checksums.json when it
// packed this package: a copied `version` field proves nothing.
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const SCOPE = '@mcp-bridge-vscode';
const ROOT = path.join(__dirname, '..');
const MAIN = path.join(ROOT, 'package.json');
const CHECKSUMS = path.join(__dirname, 'checksums.json');

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

// The folders where `pkg` may be, in order: <root>/node_modules/<pkg>, and <pkg> beside this
// package when this package is itself in a node_modules folder (for a scoped main package,
// the folder above its scope). `root` is this package's real path (Node resolves the
// symbolic links of a module's path), so a linked package finds its own dependencies.
function candidates(pkg, root = ROOT) {
  const places = [path.join(root, 'node_modules', pkg)];
  let holder = path.dirname(root);
  if (path.basename(holder).startsWith('@')) holder = path.dirname(holder);
  if (path.basename(holder) === 'node_modules') places.push(path.join(holder, pkg));
  return places;
}

// The folder of `pkg` in the places of `candidates`, or null.
function findPackage(pkg, root = ROOT) {
  return candidates(pkg, root).find((dir) => fs.existsSync(path.join(dir, 'package.json'))) || null;
}

// The SHA-256 (hex) of each binary of each platform package, as packed; {} when the file is
// absent (a checkout that ci/package-npm.sh did not pack: then nothing runs).
function checksums(file = CHECKSUMS) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return {};
  }
}

function sha256(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

// The path of the native binary `name` (mcp-bridge-vscode, mcp-bridge-harness,
// bridge-fixture-server), or an Error that says what is missing and which package to install.
function nativeBinary(name, root = ROOT) {
  const libc = process.platform === 'linux' ? linuxLibc() : '';
  const pkg = platformPackage(libc);
  const exe = process.platform === 'win32' ? `${name}.exe` : name;
  const want = version(path.join(root, 'package.json'));
  const install = `install ${pkg}@${want} beside mcp-bridge-vscode (npm install ${pkg}@${want})`;
  const dir = findPackage(pkg, root);
  if (!dir) {
    const other = libc === 'musl' ? `${SCOPE}/${process.platform}-${process.arch}` : `${pkg}-musl`;
    const hint = findPackage(other, root)
      ? ` (${other} is installed, but it is built for ${libc === 'musl' ? 'glibc' : 'musl'} ` +
        `and this system has ${libc}: was node_modules installed on another system?)`
      : '';
    return new Error(
      `mcp-bridge-vscode: the package ${pkg} is not installed${hint}: this platform has no ` +
        'build, or npm skipped the optional dependencies (--omit=optional, --no-optional); ' +
        install
    );
  }
  const have = version(path.join(dir, 'package.json'));
  if (have !== want) {
    return new Error(
      `mcp-bridge-vscode: ${pkg} is version ${have}, not ${want} (that of mcp-bridge-vscode): ` + install
    );
  }
  const expected = (checksums(path.join(root, 'lib', 'checksums.json'))[pkg] || {})[exe];
  if (!expected) {
    return new Error(
      `mcp-bridge-vscode: this mcp-bridge-vscode records no checksum of ${pkg} (${exe}), so it ` +
        `runs no binary of it: install mcp-bridge-vscode@${want} and ${pkg}@${want} from the registry`
    );
  }
  const bin = path.join(dir, 'bin', exe);
  let got;
  try {
    got = sha256(bin);
  } catch (e) {
    return new Error(`mcp-bridge-vscode: cannot read ${bin} (${e.code || e.message}): ${install}`);
  }
  if (got !== expected) {
    return new Error(
      `mcp-bridge-vscode: ${bin} is not the binary that mcp-bridge-vscode ${want} was packed with ` +
        `(its SHA-256 differs), so it does not run: ${install}`
    );
  }
  return bin;
}

module.exports = { platformPackage, nativeBinary, linuxLibc, version, candidates, sha256 };
