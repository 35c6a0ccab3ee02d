// The two services as the dev tools see them (built entry points, env names) and the child-process
// plumbing shared by scripts/start.mjs and the benches: spawning, migrating, starting and stopping.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { httpOk, redactUrl, redisPing, sleep, tcpAccepts, waitUntil } from './probes.mjs';

export const REPO_ROOT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** decisions.md "Operator contract": ports, database env names and default database names. */
export const APPS = {
  platform: {
    dir: 'apps/platform-api',
    portVar: 'PLATFORM_PORT',
    defaultPort: 3000,
    databaseVar: 'PLATFORM_DATABASE_URL',
    database: 'platform',
  },
  mail: { dir: 'apps/mail-api', portVar: 'MAIL_PORT', defaultPort: 3001, databaseVar: 'MAIL_DATABASE_URL', database: 'mail' },
};

const ENTRY_FILES = { api: 'dist/main.js', worker: 'dist/worker.js', migrate: 'dist/cli/migrate.js' };

/** Absolute path of an app's built entry point (`api`, `worker` or `migrate`). */
export function entryPoint(app, kind) {
  return path.join(REPO_ROOT, APPS[app].dir, ENTRY_FILES[kind]);
}

/** Repo-relative paths of the entry points that are not built. */
export function missingEntryPoints(apps, kinds) {
  return apps
    .flatMap((app) => kinds.map((kind) => entryPoint(app, kind)))
    .filter((file) => !existsSync(file))
    .map((file) => path.relative(REPO_ROOT, file));
}

/** Parses a comma-separated app list such as `platform,mail` (the START_APPS / BENCH_APPS knobs). */
export function parseAppList(value, variable) {
  const apps = (value ?? 'platform,mail')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = apps.filter((app) => !(app in APPS));
  if (unknown.length || !apps.length) {
    throw new Error(`${variable} must list apps among: ${Object.keys(APPS).join(', ')} (got "${value}")`);
  }
  return [...new Set(apps)];
}

/** The URL of `base` (a Postgres URL) pointing at another database. */
export function withDatabase(base, database) {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

const LABEL_WIDTH = 15;

/** A function writing lines prefixed with a padded label, e.g. `platform-api   | ...`. */
export function labelled(label, out = process.stdout) {
  const prefix = `${label.padEnd(LABEL_WIDTH)}| `;
  return (line) => out.write(`${prefix}${line}\n`);
}

function pipeLines(stream, out, label) {
  readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', labelled(label, out));
}

/**
 * Runs `node <script>` from the repo root with every output line prefixed by `label`.
 * Returns { label, child, exited } where `exited` resolves to { code, signal }.
 */
export function spawnNode(label, script, env) {
  const child = spawn(process.execPath, [script], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  pipeLines(child.stdout, process.stdout, label);
  pipeLines(child.stderr, process.stderr, label);
  const exited = new Promise((resolve) => {
    child.once('error', (err) => resolve({ code: null, signal: null, error: err }));
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  return { label, child, exited };
}

export function isRunning({ child }) {
  return child.exitCode === null && child.signalCode === null;
}

/** SIGTERM to every process still running, SIGKILL to those still there after `graceMs`. */
export async function stopProcesses(processes, graceMs = 15_000) {
  const running = processes.filter(isRunning);
  for (const p of running) p.child.kill('SIGTERM');
  const allExited = Promise.all(running.map((p) => p.exited));
  const inTime = await Promise.race([allExited.then(() => true), sleep(graceMs).then(() => false)]);
  if (inTime) return [];
  const killed = running.filter(isRunning);
  for (const p of killed) p.child.kill('SIGKILL');
  await allExited;
  return killed.map((p) => p.label);
}

/** Describes how a process ended, e.g. "exited with code 1" or "was killed by SIGKILL". */
export function describeExit({ code, signal, error }) {
  if (error) return `could not start (${error.message})`;
  return signal ? `was killed by ${signal}` : `exited with code ${code}`;
}

/** An expected failure: one line, no stack (`runBenchScript` prints `err.message` alone). */
export function fail(message) {
  throw Object.assign(new Error(message), { oneLine: true });
}

/**
 * Runs the app's compiled `migrate` command with `env` (it creates the database when missing) and
 * fails unless it exits 0. The process goes into `track` (for a cleanup that stops what is left).
 */
export async function runMigrate(app, env, { label = `${app}-migrate`, track = [] } = {}) {
  const migrate = spawnNode(label, entryPoint(app, 'migrate'), env);
  track.push(migrate);
  const migrated = await migrate.exited;
  if (migrated.code !== 0) fail(`${label} ${describeExit(migrated)} (output above)`);
}

/**
 * Starts `node <script>` (an app's HTTP entry) and resolves with the process once `url + readyPath`
 * answers 2xx; fails when the process exits first or `timeoutMs` passes. The process goes into `track`.
 */
export async function startHttpApp({ label, script, env, url, readyPath = '/healthz', timeoutMs = 60_000, track = [] }) {
  const proc = spawnNode(label, script, env);
  track.push(proc);
  const outcome = await Promise.race([waitUntil(() => httpOk(`${url}${readyPath}`), timeoutMs, 200), proc.exited]);
  if (outcome === false) fail(`${label} did not answer ${url}${readyPath} within ${Math.round(timeoutMs / 1000)} s (output above)`);
  if (outcome !== true) fail(`${label} ${describeExit(outcome)} before answering ${readyPath} (output above)`);
  return proc;
}

/**
 * Before a bench starts anything: the entry points it runs are built, Postgres accepts connections at
 * `databaseUrl` and Redis answers at `redisUrl` (each optional); fails with one line naming what is missing.
 */
export async function requirePrerequisites({ apps = [], kinds = [], databaseUrl, redisUrl }) {
  const missing = missingEntryPoints(apps, kinds);
  if (missing.length) fail(`Not built: ${missing.join(', ')} (run npm run build)`);
  if (databaseUrl) {
    const pgUrl = new URL(databaseUrl);
    if (!(await tcpAccepts(pgUrl.hostname, Number(pgUrl.port || 5432)))) fail(`Postgres is not reachable at ${redactUrl(pgUrl)}`);
  }
  if (redisUrl) await redisPing(redisUrl).catch((err) => fail(`Redis does not answer at ${redactUrl(redisUrl)} (${err.message})`));
}
