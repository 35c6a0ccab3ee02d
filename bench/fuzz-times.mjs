#!/usr/bin/env node
// `npm run bench:fuzz` (issue #29, 6): how long `npm run fuzz` takes per app on this machine. Runs each
// app's fuzz-openapi.spec.ts the way `npm run fuzz` does (jest, FUZZ_RUNS=150 unless set), one app at a
// time, and records the wall-clock time, the exit code and the spec's own counts in
// bench/results/fuzz-times.json (docs quote the figures from that file).
//   FUZZ_APPS=mail-api,platform-api (default: both)   FUZZ_RUNS (default 150)   FUZZ_SEED (default: random per run)
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { writeBenchResult } from './lib/results.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS_FILE = fileURLToPath(new URL('./results/fuzz-times.json', import.meta.url));
const APPS = (process.env.FUZZ_APPS ?? 'mail-api,platform-api').split(',');
const RUNS = process.env.FUZZ_RUNS ?? '150';

function runSpec(app) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn('npx', ['jest', 'test/fuzz-openapi.spec.ts'], {
      cwd: `${ROOT}apps/${app}`,
      env: { ...process.env, FUZZ_RUNS: RUNS, NODE_OPTIONS: '--experimental-vm-modules' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('exit', (code) => {
      const seconds = Math.round((performance.now() - started) / 100) / 10;
      // The spec prints `fuzz: <n> operations, <m> requests, ...` and `... seed <s> (replay: ...)`.
      const counts = /fuzz: (\d+) operations, (\d+) requests, (\d+) with 2xx bodies checked/.exec(output);
      const seed = /seed (\d+) \(replay/.exec(output);
      const fuzzMs = /✓ fuzzes every route[^\n]*\((\d+) ms\)/.exec(output);
      if (code !== 0) process.stderr.write(output);
      resolve({
        app,
        exitCode: code,
        wallSeconds: seconds,
        fuzzTestSeconds: fuzzMs ? Math.round(Number(fuzzMs[1]) / 100) / 10 : null,
        operations: counts ? Number(counts[1]) : null,
        requests: counts ? Number(counts[2]) : null,
        operationsWith2xxChecked: counts ? Number(counts[3]) : null,
        seed: seed ? Number(seed[1]) : null,
      });
    });
  });
}

const apps = [];
for (const app of APPS) {
  const result = await runSpec(app);
  console.log(JSON.stringify(result));
  apps.push(result);
  // Written after each app: a run stopped during the second app keeps the first one's figures.
  writeBenchResult(RESULTS_FILE, { apps }, { fuzzRuns: Number(RUNS), apps: APPS });
}
process.exit(apps.every((a) => a.exitCode === 0) ? 0 : 1);
