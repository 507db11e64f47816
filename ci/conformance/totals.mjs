// node totals.mjs <results dir> <server|client> <baseline.yml> [scenario...]: the totals of the
// checks of one run of ci/conformance.sh, over the named (scored) scenarios, or over all when
// none are named: "P passed, F failed (B of them baselined), W warnings".
import { readFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

const [dir, leg, baselineFile, ...scenarios] = process.argv.slice(2);
const baseline = new Set();
let section = '';
for (const line of readFileSync(baselineFile, 'utf8').split('\n')) {
  const head = line.match(/^(server|client):/);
  if (head) section = head[1];
  const entry = line.match(/^\s+-\s+(\S+)/);
  if (entry && section === leg) baseline.add(entry[1]);
}
let passed = 0, failed = 0, warnings = 0, baselined = 0;
// The results of a scenario with a slash in its name (auth/metadata-default) lie one folder
// deeper (auth/metadata-default-<time>).
const results = (folder, prefix) =>
  (existsSync(folder) ? readdirSync(folder) : []).flatMap((entry) =>
    existsSync(join(folder, entry, 'checks.json'))
      ? [[`${prefix}${entry}`, join(folder, entry, 'checks.json')]]
      : prefix === '' && statSync(join(folder, entry)).isDirectory()
        ? results(join(folder, entry), `${entry}/`)
        : [],
  );
for (const [entry, file] of results(dir, '')) {
  const name = entry.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
  if (scenarios.length > 0 && !scenarios.includes(name)) continue;
  for (const check of JSON.parse(readFileSync(file, 'utf8'))) {
    if (check.status === 'SUCCESS') passed++;
    else if (check.status === 'FAILURE' || check.status === 'WARNING') {
      if (check.status === 'FAILURE') failed++;
      else warnings++;
      if (baseline.has(name) || baseline.has(`${name}:${check.id}`)) baselined++;
    }
  }
}
console.log(`${passed} passed, ${failed} failed, ${warnings} warnings (${baselined} of these baselined)`);
