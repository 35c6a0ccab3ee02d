#!/usr/bin/env node
// Campaign benchmarks, run after a build: `node bench/campaign.mjs` (`npm run bench:campaign` builds first).
//
// Runs each part as its own process, one after another (they would skew each other's figures):
//   planning       bench/campaign/planning.mjs: snapshot + enqueue of a campaign to 100,000 and 1,000,000
//                  contacts (targets < 5 s and < 60 s, the worker under 300 MB);
//   segment-count  bench/campaign/segment-count.mjs (the segments module's), when present: the live count
//                  of a DYNAMIC segment;
//   delivery       bench/campaign/delivery.mjs: the default rate (within 2% of 14/s over 60 s, transactional
//                  sends interleaved) and, with the rate lifted, campaign emails/s against the transactional
//                  pipeline in the same run (goal >= 0.85);
//   engagement     bench/campaign/engagement.mjs: stats, /links and the `campaign.<id> notOpened` segment count of a
//                  campaign of 100,000 recipients with 300,000 opens and clicks (targets < 200, < 200, < 500 ms p50).
//   suppression    bench/campaign/suppression.mjs: campaign throughput with 100,000 suppressed addresses against none
//                  (same run, goal >= 0.95x) and the CSV import of 1,000,000 rows (goal < 30 s, API RSS < 300 MB).
// Each part prints its figures with `met` or `MISSED` and writes its own bench/results/*.json; this script
// collects them into bench/results/campaign.json and exits 1 when a part failed to run.
//
// Knobs: BENCH_CAMPAIGN_PARTS (default planning,segment-count,delivery,engagement,suppression), and each part's own (see them).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../scripts/lib/apps.mjs';
import { writeBenchResult } from './lib/results.mjs';

const PARTS = {
  planning: { script: 'bench/campaign/planning.mjs', results: 'bench/results/campaign-planning.json' },
  'segment-count': { script: 'bench/campaign/segment-count.mjs', results: 'bench/results/segment-count.json' },
  delivery: { script: 'bench/campaign/delivery.mjs', results: 'bench/results/campaign-delivery.json' },
  engagement: { script: 'bench/campaign/engagement.mjs', results: 'bench/results/campaign-engagement.json' },
  suppression: { script: 'bench/campaign/suppression.mjs', results: 'bench/results/campaign-suppression.json' },
};
const RESULTS_FILE = path.join(REPO_ROOT, 'bench', 'results', 'campaign.json');

function run(script) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script], { cwd: REPO_ROOT, stdio: 'inherit' });
    const forward = (signal) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.once('close', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve({ code, signal });
    });
  });
}

const wanted = (process.env.BENCH_CAMPAIGN_PARTS ?? Object.keys(PARTS).join(','))
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const unknown = wanted.filter((part) => !(part in PARTS));
if (unknown.length) {
  console.error(`bench:campaign: unknown part(s) ${unknown.join(', ')}; known: ${Object.keys(PARTS).join(', ')}`);
  process.exit(1);
}

const summary = { parts: {} };
const failed = [];
for (const part of wanted) {
  const { script, results } = PARTS[part];
  if (!existsSync(path.join(REPO_ROOT, script))) {
    console.log(`bench:campaign: ${part}: ${script} is not there, skipped`);
    summary.parts[part] = { skipped: `${script} is not there` };
    continue;
  }
  console.log(`bench:campaign: ${part} (${script})`);
  const started = Date.now();
  const exit = await run(script);
  if (exit.code !== 0) failed.push(`${part} (${exit.signal ?? `exit code ${exit.code}`})`);
  const file = path.join(REPO_ROOT, results);
  summary.parts[part] = {
    exitCode: exit.code,
    seconds: Math.round((Date.now() - started) / 1000),
    results: exit.code === 0 && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null,
  };
}
writeBenchResult(RESULTS_FILE, summary, { parts: wanted });
console.log(`written: ${path.relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE}`);
if (failed.length) {
  console.error(`bench:campaign: failed: ${failed.join(', ')}`);
  process.exit(1);
}
