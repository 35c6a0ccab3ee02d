#!/usr/bin/env node
// Notification fan-out benchmark (needs a build: `npm run build`). In a fresh database
// `platform_fanout_bench` (created by the app's migrate command, dropped at the end) it seeds one role
// with BENCH_FANOUT_USERS users (default 100,000) in SQL, starts platform-api and its worker, then per
// run: POST /notifications/role and polls Postgres until every member's row exists (time from the
// request to the last row written; target BENCH_FANOUT_TARGET_MS, default 5000), and times a plain
// set-based INSERT ... SELECT of the same rows (members joined to users in Postgres) into the same table. Prints one line per run and a
// summary; writes bench/results/fanout-latest.json.
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import {
  APPS,
  REPO_ROOT,
  describeExit,
  entryPoint,
  missingEntryPoints,
  spawnNode,
  stopProcesses,
  withDatabase,
} from '../scripts/lib/apps.mjs';
import { deleteRedisKeys, dropDatabase } from '../scripts/lib/databases.mjs';
import { freePort, httpOk, redactUrl, redisPing, sleep, waitUntil } from '../scripts/lib/probes.mjs';
import { formatSummary, profiledEnv, summarizeProfile, takeProfile } from './lib/cpu-profile-summary.mjs';
import { writeBenchResult } from './lib/results.mjs';
import { fail, runBenchScript } from './lib/run-script.mjs';

const USERS = positiveInt('BENCH_FANOUT_USERS', 100_000);
const RUNS = positiveInt('BENCH_FANOUT_RUNS', 3);
const TARGET_MS = positiveInt('BENCH_FANOUT_TARGET_MS', 5000);
const POLL_MS = 10;
const QUEUE_PREFIX = 'bench-fanout';
const RESULTS_FILE = path.resolve(process.env.BENCH_RESULTS_FILE ?? path.join(REPO_ROOT, 'bench', 'results', 'fanout-latest.json'));

// BENCH_CPU_PROF=<dir>: the worker runs under V8's sampling profiler; the self-time summary of the
// measured runs is printed and kept in the results (profiling slows it: not for the figures).
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null;
const children = [];
let worker;
let databaseUrl;
let redisUrl;

function positiveInt(name, fallback) {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) fail(`${name} must be a positive integer (got "${process.env[name]}")`);
  return value;
}

async function startPlatform(env) {
  const migrate = spawnNode('platform-migrate', entryPoint('platform', 'migrate'), env);
  children.push(migrate);
  const migrated = await migrate.exited;
  if (migrated.code !== 0) fail(`platform migrations ${describeExit(migrated)} (output above)`);
  const api = spawnNode('platform-api', entryPoint('platform', 'api'), env);
  children.push(api);
  const url = `http://127.0.0.1:${env.PLATFORM_PORT}`;
  const outcome = await Promise.race([waitUntil(() => httpOk(`${url}/healthz`), 60_000, 200), api.exited]);
  if (outcome !== true) fail(`platform-api ${outcome === false ? 'did not answer /healthz within 60 s' : describeExit(outcome)}`);
  const profiled = CPU_PROF_DIR ? profiledEnv(env, CPU_PROF_DIR, 'platform-worker') : null;
  worker = Object.assign(spawnNode('platform-worker', entryPoint('platform', 'worker'), profiled?.env ?? env), {
    profileFile: profiled?.file,
  });
  children.push(worker);
  return url;
}

/** One role with USERS members in the bootstrap admin's tenant, written set-based. */
async function seed(db, adminEmail) {
  const [admin] = (await db.query('SELECT tenant_id, organization_id FROM users WHERE email = $1', [adminEmail])).rows;
  const [role] = (await db.query(`INSERT INTO roles (tenant_id, name) VALUES ($1, 'fanout-bench') RETURNING id`, [admin.tenant_id])).rows;
  await db.query(`INSERT INTO role_acls (tenant_id, role_id, features) VALUES ($1, $2, '{}')`, [admin.tenant_id, role.id]);
  await db.query(
    `WITH u AS (
       INSERT INTO users (tenant_id, organization_id, email)
       SELECT $1, $2, 'fanout-' || g || '@bench.example.com' FROM generate_series(1, $4::int) g
       RETURNING id)
     INSERT INTO user_roles (user_id, role_id, tenant_id) SELECT id, $3, $1 FROM u`,
    [admin.tenant_id, admin.organization_id, role.id, USERS],
  );
  await db.query('ANALYZE users; ANALYZE user_roles');
  const members = (await db.query('SELECT user_id FROM user_roles WHERE role_id = $1 ORDER BY user_id', [role.id])).rows.map(
    (r) => r.user_id,
  );
  return { tenantId: admin.tenant_id, organizationId: admin.organization_id, roleId: role.id, members };
}

async function login(url, email, password) {
  const res = await fetch(`${url}/auth/login`, { method: 'POST', body: new URLSearchParams({ email, password }) });
  const body = await res.json();
  if (res.status !== 200) fail(`login failed: ${res.status} ${JSON.stringify(body)}`);
  return body.token;
}

/**
 * POST /notifications/role, then poll until every member's row of the batch is written. The poll is an
 * index lookup of the last member's row (a count of 100,000 rows every 10 ms would load the database
 * the fan-out writes to); once it exists, one count confirms every row is there.
 */
async function timeFanOut(url, token, db, { roleId, members }) {
  const lastMember = members[members.length - 1];
  const started = performance.now();
  const res = await fetch(`${url}/notifications/role`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      type: 'bench.fanout',
      severity: 'info',
      title: 'Fan-out benchmark',
      body: 'One notification to a role',
      roleId,
    }),
  });
  const answered = performance.now();
  const body = await res.json();
  if (res.status !== 201 || body.count !== USERS) fail(`POST /notifications/role answered ${res.status} ${JSON.stringify(body)}`);
  const written = async () => {
    const last = await db.query('SELECT 1 FROM notifications WHERE batch_id = $1 AND recipient_user_id = $2', [body.batchId, lastMember]);
    if (last.rowCount === 0) return 0;
    return (await db.query('SELECT count(*)::int AS n FROM notifications WHERE batch_id = $1', [body.batchId])).rows[0].n;
  };
  for (let n = await written(); n !== USERS; n = await written()) {
    if (performance.now() - started > 120_000) fail(`fan-out incomplete after 120 s (${n} of ${USERS} rows)`);
    await sleep(POLL_MS);
  }
  return { ms: performance.now() - started, responseMs: answered - started };
}

/**
 * The same-run baseline (issue #34): the same rows as ONE set-based INSERT ... SELECT, the role's members
 * joined to their users (same tenant, not deleted, as the fan-out's rule) inside Postgres: no rows
 * through the client, no chunks, nothing returned.
 */
async function timePlainInsert(db, seeded) {
  const batchId = randomUUID();
  const sql = `INSERT INTO notifications (tenant_id, organization_id, recipient_user_id, batch_id, type, title, body, severity)
    SELECT u.tenant_id, u.organization_id, u.id, $2, 'bench.fanout', 'Fan-out benchmark', 'One notification to a role', 'info'
      FROM user_roles ur JOIN users u ON u.id = ur.user_id
     WHERE ur.role_id = $3 AND u.tenant_id = $1 AND u.deleted_at IS NULL`;
  const started = performance.now();
  const result = await db.query(sql, [seeded.tenantId, batchId, seeded.roleId]);
  const ms = performance.now() - started;
  if (result.rowCount !== USERS) fail(`the set-based INSERT wrote ${result.rowCount} rows, not ${USERS}`);
  return ms;
}

async function main() {
  const missing = missingEntryPoints(['platform'], ['api', 'worker', 'migrate']);
  if (missing.length) fail(`Not built: ${missing.join(', ')} (run npm run build)`);
  const { databaseVar, database } = APPS.platform;
  databaseUrl = withDatabase(process.env[databaseVar] ?? `postgres://postgres@127.0.0.1:5432/${database}`, `${database}_fanout_bench`);
  redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  await redisPing(redisUrl).catch((err) => fail(`Redis does not answer at ${redactUrl(redisUrl)} (${err.message})`));
  await dropDatabase(databaseUrl);

  const admin = { email: 'fanout-bench@example.com', password: randomBytes(18).toString('base64url') };
  const env = {
    ...process.env,
    LOG_LEVEL: 'warn',
    [databaseVar]: databaseUrl,
    PLATFORM_PORT: String(await freePort()),
    REDIS_URL: redisUrl,
    QUEUE_PREFIX,
    PLATFORM_BOOTSTRAP_ADMIN_EMAIL: admin.email,
    PLATFORM_BOOTSTRAP_ADMIN_PASSWORD: admin.password,
  };
  const url = await startPlatform(env);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const seeded = await seed(db, admin.email);
    const token = await login(url, admin.email, admin.password);
    console.log(`fanout: ${USERS} members in one role; ${RUNS} runs (after one warm-up run)`);
    await timeFanOut(url, token, db, seeded); // warm-up: JIT, connection pools, worker queues
    const runs = [];
    const fromUs = Number(process.hrtime.bigint() / 1000n);
    for (let i = 0; i < RUNS; i += 1) {
      const fanOut = await timeFanOut(url, token, db, seeded);
      const plainMs = await timePlainInsert(db, seeded);
      const run = {
        fanOutMs: Math.round(fanOut.ms),
        responseMs: Math.round(fanOut.responseMs * 10) / 10,
        fanOutRowsPerSec: Math.round(USERS / (fanOut.ms / 1000)),
        plainInsertMs: Math.round(plainMs),
        plainInsertRowsPerSec: Math.round(USERS / (plainMs / 1000)),
      };
      run.ratio = Math.round((run.fanOutRowsPerSec / run.plainInsertRowsPerSec) * 100) / 100;
      runs.push(run);
      console.log(
        `fanout run ${i + 1}: request to last row ${run.fanOutMs} ms (${run.fanOutRowsPerSec} rows/s; response in ${run.responseMs} ms) | ` +
          `set-based INSERT ${run.plainInsertMs} ms (${run.plainInsertRowsPerSec} rows/s) | ratio ${run.ratio}`,
      );
    }
    const cpu = worker.profileFile
      ? summarizeProfile(await takeProfile(worker.child, worker.profileFile), {
          fromUs,
          toUs: Number(process.hrtime.bigint() / 1000n),
          top: 15,
        })
      : undefined;
    if (cpu) console.log(formatSummary('platform-worker (measured runs and plain INSERTs)', cpu));
    const median = (key) => [...runs].map((r) => r[key]).sort((x, y) => x - y)[Math.floor(runs.length / 2)];
    const summary = {
      users: USERS,
      medianFanOutMs: median('fanOutMs'),
      medianFanOutRowsPerSec: median('fanOutRowsPerSec'),
      medianPlainInsertRowsPerSec: median('plainInsertRowsPerSec'),
      medianRatio: median('ratio'),
      targetMs: TARGET_MS,
    };
    summary.withinTarget = summary.medianFanOutMs < TARGET_MS;
    console.log(
      `\nfanout median: ${summary.medianFanOutMs} ms from request to last row (target < ${TARGET_MS} ms: ${summary.withinTarget ? 'met' : 'MISSED'}), ` +
        `${summary.medianFanOutRowsPerSec} rows/s vs set-based INSERT ${summary.medianPlainInsertRowsPerSec} rows/s (ratio ${summary.medianRatio})`,
    );
    writeBenchResult(RESULTS_FILE, { summary, runs, cpu }, { users: USERS, runs: RUNS, targetMs: TARGET_MS });
    console.log(`written: ${path.relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE}`);
  } finally {
    await db.end();
  }
}

let cleaning;
function cleanup() {
  cleaning ??= (async () => {
    await stopProcesses(children, 10_000);
    if (databaseUrl)
      await dropDatabase(databaseUrl).catch((err) => console.error(`could not drop ${redactUrl(databaseUrl)}: ${err.message}`));
    if (redisUrl)
      await deleteRedisKeys(redisUrl, QUEUE_PREFIX).catch((err) =>
        console.error(`could not delete Redis keys ${QUEUE_PREFIX}:*: ${err.message}`),
      );
  })();
  return cleaning;
}

await runBenchScript('fanout', main, cleanup);
