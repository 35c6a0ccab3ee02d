#!/usr/bin/env node
// `npm run bench:ci` (issue #29, "Done when"): how long CI takes from a fresh clone on this machine. Clones
// the committed HEAD into a temporary folder, runs `.ci/run` there (npm ci, lint, then the README's test
// command, `npm test`), and records the wall-clock time, the exit code and each workspace's test counts
// and jest time in bench/results/fresh-clone-ci.json (docs quote the figures from that file). Uncommitted
// changes are not in the clone: the result's `dirty` flag says when the checkout had any.
//   BENCH_CI_LOG=<file>: where the run's output goes (default: ci.log beside the clone, in the OS temp dir)
//   BENCH_CI_PARSE=<file>: only parse an existing `.ci/run` log (no run) and print what it would record
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeBenchResult } from './lib/results.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS_FILE = fileURLToPath(new URL('./results/fresh-clone-ci.json', import.meta.url));
/** The brief's goal for the whole CI run on this 2-core machine. */
const GOAL_SECONDS = 30 * 60;

/**
 * What a `.ci/run` log says of each workspace's jest run: `<ws>:test: Tests: [F failed, ]P passed, T total`
 * and `<ws>:test: Time: S s` (turbo prefixes each line with the workspace's task).
 */
export function parseCiLog(text) {
  const workspaces = new Map();
  const entry = (name) => workspaces.get(name) ?? workspaces.set(name, { workspace: name }).get(name);
  for (const line of text.split('\n')) {
    const tests = /^([\w@/-]+):test: Tests:\s+(.*\d+ total)/.exec(line);
    if (tests) {
      const counts = Object.fromEntries([...tests[2].matchAll(/(\d+) (failed|skipped|passed|total)/g)].map((m) => [m[2], Number(m[1])]));
      Object.assign(entry(tests[1]), { passed: counts.passed ?? 0, failed: counts.failed ?? 0, total: counts.total });
    }
    const time = /^([\w@/-]+):test: Time:\s+([\d.]+) s/.exec(line);
    if (time) entry(time[1]).jestSeconds = Math.round(Number(time[2]));
  }
  return [...workspaces.values()];
}

function runCi(clone, logFile) {
  return new Promise((resolve) => {
    const log = createWriteStream(logFile);
    const started = performance.now();
    const child = spawn('bash', ['.ci/run'], { cwd: clone, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on('exit', (code) => {
      log.end();
      resolve({ exitCode: code, wallSeconds: Math.round((performance.now() - started) / 1000) });
    });
  });
}

function verdict(run, workspaces) {
  const missed = [];
  if (run.exitCode !== 0) missed.push(`.ci/run exit code ${run.exitCode}`);
  if (run.wallSeconds > GOAL_SECONDS) missed.push(`.ci/run under ${GOAL_SECONDS / 60} min`);
  if (workspaces.length === 0) missed.push('no test counts in the log');
  for (const w of workspaces) if (w.failed > 0 || w.passed !== w.total) missed.push(`${w.workspace}: every test passes`);
  return missed;
}

if (process.env.BENCH_CI_PARSE) {
  console.log(JSON.stringify(parseCiLog(readFileSync(process.env.BENCH_CI_PARSE, 'utf8')), null, 2));
} else {
  const workdir = mkdtempSync(path.join(tmpdir(), 'fresh-clone-ci-'));
  // mkdtemp makes it 0700; the tests' embedded Postgres runs as user `postgres` (Postgres refuses root)
  // and must reach its binaries in the clone's node_modules, as in a checkout anywhere else.
  chmodSync(workdir, 0o755);
  const clone = path.join(workdir, 'repo');
  const logFile = path.resolve(process.env.BENCH_CI_LOG ?? path.join(workdir, 'ci.log'));
  execFileSync('git', ['clone', '-q', ROOT, clone], { stdio: 'inherit' });
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: clone, encoding: 'utf8' }).trim();
  console.log(`bench:ci: .ci/run in a fresh clone of ${commit} (${clone}); output in ${logFile}`);
  const run = await runCi(clone, logFile);
  const workspaces = parseCiLog(readFileSync(logFile, 'utf8'));
  const missed = verdict(run, workspaces);
  const report = writeBenchResult(
    RESULTS_FILE,
    { freshCloneCi: { ...run, goalSeconds: GOAL_SECONDS, workspaces }, missed },
    { command: '.ci/run (npm ci, npm run lint, npm test)', clonedCommit: commit },
  );
  console.log(JSON.stringify(report.freshCloneCi, null, 2));
  console.log(missed.length ? `missed: ${missed.join('; ')} (log kept: ${logFile})` : 'every goal met');
  // The clone holds a full install (about 1 GB): removed; the log stays unless it was inside it.
  rmSync(clone, { recursive: true, force: true });
  process.exit(missed.length ? 1 : 0);
}
