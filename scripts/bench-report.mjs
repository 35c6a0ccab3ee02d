#!/usr/bin/env node
// `npm run bench:report`: regenerates the figure tables of docs/benchmarks.md and bench/README.md from
// the committed bench/results/*.json (bench/lib/report.mjs), between their bench:report markers.
// Usage: node scripts/bench-report.mjs [--check] [--root <dir>]
//   --check  writes nothing; exits 1 when a page differs from what would be written now
//   --root   the repository to read and write (default: this one; the test points it at a copy)
// Only result files git tracks count (in a git work tree): a run not yet committed changes no page.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readResults, renderPages, replaceRegion } from '../bench/lib/report.mjs';

const { values } = parseArgs({ options: { check: { type: 'boolean' }, root: { type: 'string' } } });
const root = path.resolve(values.root ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
/** The result files git tracks under `root` (null outside a git work tree: then every file counts). */
function trackedResults() {
  try {
    const listed = execFileSync('git', ['-C', root, 'ls-files', '--', 'bench/results'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    if (!existsSync(path.join(root, '.git'))) return null;
    return new Set(
      listed
        .split('\n')
        .filter(Boolean)
        .map((file) => path.basename(file)),
    );
  } catch {
    return null;
  }
}
const pages = renderPages(readResults(path.join(root, 'bench', 'results'), trackedResults()));

const stale = [];
for (const [page, region] of Object.entries(pages)) {
  const file = path.join(root, page);
  const text = readFileSync(file, 'utf8');
  const now = replaceRegion(text, region, page);
  if (now === text) continue;
  if (values.check) {
    const was = text.split('\n');
    const line = now.split('\n').findIndex((l, i) => l !== was[i]);
    stale.push(`${page} (line ${line + 1}: expected ${JSON.stringify(now.split('\n')[line])}, found ${JSON.stringify(was[line])})`);
  } else {
    writeFileSync(file, now);
    console.log(`bench-report: ${page} written`);
  }
}
if (stale.length) {
  console.error(`bench-report: stale: ${stale.join('; ')}; run \`npm run bench:report\` and commit the pages`);
  process.exit(1);
}
if (values.check) console.log('bench-report: docs/benchmarks.md and bench/README.md are up to date');
