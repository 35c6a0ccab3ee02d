// Local Postgres and Redis for `npm start` when none is running (decisions.md "zero-config start").
// Both run in their own process group (detached), so Ctrl+C in the terminal reaches the apps only
// and the databases stop after the apps have drained.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from './apps.mjs';
import { redisAnswers, sleep, waitUntil } from './probes.mjs';

const PG_SERVER = fileURLToPath(new URL('./embedded-postgres-server.mjs', import.meta.url));

function oneLine(text) {
  const line =
    String(text ?? '')
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}

function exitPromise(child) {
  return new Promise((resolve) => {
    child.once('error', (error) => resolve({ error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

/** A stop() for a detached child: SIGTERM, then SIGKILL after `graceMs`; also killed if we exit first. */
function stopper(child, exited, graceMs) {
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  return async () => {
    process.off('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const inTime = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
    if (!inTime) {
      child.kill('SIGKILL');
      await exited;
    }
  };
}

/** Starts `redis-server` on 127.0.0.1:`port` with its files under `<dataDir>/redis`. Throws a one-line reason. */
export async function startRedisServer({ port, dataDir, log }) {
  const dir = path.join(dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'];
  const child = spawn('redis-server', args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let lastLine = '';
  for (const stream of [child.stdout, child.stderr]) {
    readline.createInterface({ input: stream }).on('line', (line) => {
      lastLine = line;
      log(line);
    });
  }
  const exited = exitPromise(child);
  const url = `redis://127.0.0.1:${port}`;
  const ready = await Promise.race([waitUntil(() => redisAnswers(url, 500), 10_000, 100), exited.then(() => false)]);
  const stop = stopper(child, exited, 5_000);
  if (!ready) {
    await stop();
    const { error } = await exited;
    throw new Error(oneLine(error?.message ?? lastLine) || 'redis-server did not answer PING within 10 s');
  }
  return { url, stop };
}

/** The postgres OS user must reach the data directory: every parent needs the "other" execute bit. */
function ensureReachableByPostgresUser(pgDir, dataDir) {
  for (let dir = path.dirname(pgDir); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const mode = statSync(dir).mode & 0o7777;
    if (mode & 0o001) continue;
    if (dir !== dataDir) throw new Error(`${dir} is not searchable by the postgres user (chmod o+x ${dir})`);
    chmodSync(dir, mode | 0o001); // only traversal: .data/ itself stays unlistable
  }
}

/**
 * Starts an embedded Postgres (data in `<dataDir>/postgres`, log in `<dataDir>/postgres.log`) through
 * scripts/lib/embedded-postgres-server.mjs. Throws a one-line reason.
 */
export async function startEmbeddedPostgres({ port, dataDir, log }) {
  const pgDir = path.join(dataDir, 'postgres');
  const logFile = path.join(dataDir, 'postgres.log');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (process.getuid?.() === 0) ensureReachableByPostgresUser(pgDir, dataDir);
  const child = spawn(process.execPath, [PG_SERVER, pgDir, String(port), logFile], {
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'], // stdin stays open: the server stops Postgres when it closes
  });
  const exited = exitPromise(child);
  readline.createInterface({ input: child.stderr }).on('line', log);
  const lines = readline.createInterface({ input: child.stdout });
  const first = new Promise((resolve) => lines.once('line', resolve));
  const timeout = sleep(120_000).then(() => JSON.stringify({ error: 'Postgres did not start within 120 s' }));
  const answer = await Promise.race([first, timeout, exited.then(() => '{}')]);
  lines.on('line', log);
  const stop = stopper(child, exited, 20_000);
  let message;
  try {
    message = JSON.parse(answer);
  } catch {
    message = { error: answer };
  }
  if (!message.ready) {
    await stop();
    throw new Error(`${oneLine(message.error) || 'the embedded Postgres server exited'} (log: ${path.relative(REPO_ROOT, logFile)})`);
  }
  return { initialised: Boolean(message.initialised), stop };
}
