// What the campaign benchmarks share: a fresh database migrated by the mail-api's own command, the
// compiled API and workers as child processes (production settings, a bootstrap project), an SMTP sink
// that counts and timestamps messages, set-based contact seeding, RSS sampling and cleanup.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import {
  entryPoint,
  requirePrerequisites,
  runMigrate,
  spawnNode,
  startHttpApp,
  stopProcesses,
  withDatabase,
} from '../../scripts/lib/apps.mjs';
import { deleteRedisKeys, dropDatabase, withSqlClient } from '../../scripts/lib/databases.mjs';
import { freePort, sleep, waitUntil } from '../../scripts/lib/probes.mjs';
import { startCountingSink } from '../lib/counting-smtp-sink.mjs';
import { fail } from '../lib/run-script.mjs';

export const DOMAIN = 'bench.example.com';
export const baseUrl = process.env.MAIL_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/mail';
export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const withClient = withSqlClient;

const SECRET_KEY = `sk_${randomBytes(24).toString('hex')}`;
const PUBLIC_KEY = `pk_${randomBytes(24).toString('hex')}`;
// One key for the whole run: the first process seals the domain's DKIM key with it, later ones open it.
const SECRETS_KEY = randomBytes(32).toString('hex');
const LINK_SECRET = randomBytes(32).toString('hex');

/** The benchmark's own world: a database, a queue prefix, its child processes. `cleanup` undoes it all. */
export function benchEnvironment(name) {
  const database = `mail_bench_${name}`;
  const databaseUrl = withDatabase(baseUrl, database);
  const queuePrefix = `bench-${name}`;
  const children = [];
  let sink;
  let apiUrl;

  async function checkPrerequisites() {
    await requirePrerequisites({ apps: ['mail'], kinds: ['api', 'worker', 'migrate'], databaseUrl: baseUrl, redisUrl });
  }

  /** Drops and re-creates the database through the app's `migrate` command. */
  async function prepareDatabase() {
    await dropDatabase(databaseUrl);
    const env = { ...process.env, MAIL_DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
    await runMigrate('mail', env, { label: `${name}-migrate`, track: children });
  }

  function env(extra = {}) {
    return {
      ...process.env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      MAIL_DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: queuePrefix,
      MAIL_LINK_SECRET: LINK_SECRET,
      MAIL_SECRETS_KEY: SECRETS_KEY,
      MAIL_BOOTSTRAP_SECRET_KEY: SECRET_KEY,
      MAIL_BOOTSTRAP_PUBLIC_KEY: PUBLIC_KEY,
      MAIL_SMTP_URL: sink.url,
      MAIL_RATE_LIMIT_PER_MINUTE: '100000',
      // Several workers on one machine: each serves its metrics on a port of its own.
      MAIL_WORKER_METRICS_PORT: '0',
      ...extra,
    };
  }

  /** The API on a free port; resolves with the bootstrap project's id once /readyz answers. */
  let apiPid = null;
  async function startApi(extra = {}) {
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    const apiEnv = env({ MAIL_PORT: String(port), MAIL_PUBLIC_URL: apiUrl, ...extra });
    const api = await startHttpApp({
      label: `${name}-api`,
      script: entryPoint('mail', 'api'),
      env: apiEnv,
      url: apiUrl,
      readyPath: '/readyz',
      track: children,
    });
    apiPid = api.child.pid;
    return withClient(databaseUrl, async (c) => (await c.query(`SELECT id FROM projects WHERE name = 'Default'`)).rows[0].id);
  }

  /** `count` worker processes; resolves once each consumes the email queue. */
  async function startWorkers(count, extra = {}) {
    const started = Array.from({ length: count }, (_, i) => spawnNode(`${name}-worker-${i + 1}`, entryPoint('mail', 'worker'), env(extra)));
    children.push(...started);
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue('mail-email', { connection, prefix: queuePrefix });
    try {
      const ready = await waitUntil(async () => (await queue.getWorkersCount()) >= count, 60_000);
      if (!ready) fail('the mail workers did not start consuming (output above)');
    } finally {
      await queue.close();
      connection.disconnect();
    }
    return started;
  }

  async function stop(processes) {
    await stopProcesses(processes, 15_000);
  }

  /** A VERIFIED domain with a fresh DKIM key (written plaintext; the processes seal it). */
  async function insertDomain(projectId) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await withClient(databaseUrl, (c) =>
      c.query(
        `INSERT INTO domains (project_id, domain, status, verification_token, dkim_selector, dkim_private_key, dkim_public_key, verified_at)
         VALUES ($1, $2, 'VERIFIED', $3, 'bench', $4, 'unused', now())`,
        [projectId, DOMAIN, randomBytes(16).toString('hex'), pem],
      ),
    );
  }

  /** Contacts `u<from>..u<to>@<domain>` (subscribed, with a first name), one INSERT ... SELECT per million. */
  async function seedContacts(projectId, from, to, domain = 'readers.example') {
    for (let start = from; start <= to; start += 1_000_000) {
      const end = Math.min(to, start + 999_999);
      await withClient(databaseUrl, (c) =>
        c.query(
          `INSERT INTO contacts (project_id, email, data)
           SELECT $1, 'u' || g || '@' || $4, jsonb_build_object('firstName', 'Reader ' || g, 'plan', CASE WHEN g % 5 = 0 THEN 'pro' ELSE 'free' END)
             FROM generate_series($2::int, $3::int) AS g`,
          [projectId, start, end, domain],
        ),
      );
    }
    await withClient(databaseUrl, (c) => c.query('VACUUM ANALYZE contacts'));
  }

  /** JSON request to the API with the bootstrap project's secret key. */
  async function api(method, path, body) {
    const res = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${SECRET_KEY}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json().catch(() => null);
    if (!res.ok) fail(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  async function startSink() {
    sink = await startCountingSink();
    return sink;
  }

  async function deleteQueueKeys() {
    await deleteRedisKeys(redisUrl, queuePrefix);
  }

  let cleaning;
  function cleanup() {
    cleaning ??= (async () => {
      await stopProcesses(children, 10_000);
      await sink?.close();
      await dropDatabase(databaseUrl).catch((err) => console.error(`could not drop ${database}: ${err.message}`));
      await deleteQueueKeys().catch((err) => console.error(`could not delete Redis keys ${queuePrefix}:*: ${err.message}`));
    })();
    return cleaning;
  }

  return {
    databaseUrl,
    queuePrefix,
    checkPrerequisites,
    prepareDatabase,
    startSink,
    startApi,
    startWorkers,
    stop,
    insertDomain,
    seedContacts,
    api,
    /** The API process's pid (RSS sampling), once started. */
    apiPid: () => apiPid,
    /** The API's base URL and the bootstrap project's secret key, for requests `api` does not make (CSV bodies). */
    apiBase: () => ({ url: apiUrl, secretKey: SECRET_KEY }),
    deleteQueueKeys,
    cleanup,
  };
}

/** Resident set size of a process in MB (Linux /proc), or null once it is gone. */
export function rssMb(pid) {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Samples the peak RSS of `pids` every 100 ms until `stop()`; `stop()` resolves with the peak per pid. */
export function sampleRss(pids) {
  const peak = Object.fromEntries(pids.map((pid) => [pid, 0]));
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const pid of pids) peak[pid] = Math.max(peak[pid], rssMb(pid) ?? 0);
      await sleep(100);
    }
  })();
  return async () => {
    running = false;
    await loop;
    return peak;
  };
}

/** `MISSED` beside a figure whose target is not met, so a run never reads as a pass by accident. */
export function verdict(met) {
  return met ? 'met' : 'MISSED';
}
