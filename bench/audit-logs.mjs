#!/usr/bin/env node
// Audit-log benchmark (issue 4), run after a build: `node bench/audit-logs.mjs`.
//
// 1. A fresh database `platform_bench_audit` (created by the app's `migrate` command) and the API
//    (bench/lib/platform-bench-server.mjs: the app exactly as dist/main.js builds it, plus one
//    bench-only route) on a free port; 100,000 action_logs rows seeded with one
//    INSERT ... SELECT generate_series.
// 2. Reads, with autocannon, against GET /healthz: the action list at page 1 and at the last page
//    (page=500&pageSize=200 of 100,000) for a tenant viewer, with includeTotal=false, and a deep
//    page of a self viewer.
// 3. Role update throughput through the command bus versus the same update written directly, in
//    one run, same concurrency, rounds alternated so background load hits both alike:
//    a. over HTTP: PUT /auth/roles (command bus: snapshots, action log entry, undo token) versus
//       PUT /bench/direct-role-update (the same guard, validation, checks, lock, rename, cache
//       invalidation and event, without the bus). Their ratio is what the log costs end to end
//       (target: at most 25%).
//    b. in process (no HTTP): RolesService.update versus the same direct write: the log's share of
//       the bare write path, a stricter figure.
//    c. context: PUT /auth/roles versus the bare `UPDATE roles` issued with pg in a loop (same roles,
//       same concurrency): the whole HTTP, auth and command stack against one statement.
// Always stops the API and drops the database. Knobs: BENCH_DURATION (s, default 10),
// BENCH_CONNECTIONS (default 16), BENCH_WARMUP (s, default 2), BENCH_ROUNDS (default 3),
// BENCH_AUDIT_ROWS (default 100000), PLATFORM_DATABASE_URL (server to use), REDIS_URL.
// Writes bench/results/audit-logs.json.
import autocannon from 'autocannon';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { writeBenchResult } from './lib/results.mjs';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { APPS, REPO_ROOT, requirePrerequisites, runMigrate, startHttpApp, stopProcesses, withDatabase } from '../scripts/lib/apps.mjs';
import { dropDatabase, withSqlClient } from '../scripts/lib/databases.mjs';
import { freePort } from '../scripts/lib/probes.mjs';
import { fail, runBenchScript } from './lib/run-script.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROWS = Number(process.env.BENCH_AUDIT_ROWS ?? 100_000);
const PAGE_SIZE = 200;
const DEEP_PAGE = Math.max(1, Math.ceil(ROWS / PAGE_SIZE)); // 500 for 100,000 rows: the last page
const RESULTS_FILE = path.join(REPO_ROOT, 'bench', 'results', 'audit-logs.json');
const SERVER = path.join(REPO_ROOT, 'bench', 'lib', 'platform-bench-server.mjs');
const API_DIST = path.join(REPO_ROOT, APPS.platform.dir, 'dist');

const baseUrl = process.env.PLATFORM_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/platform';
const databaseUrl = withDatabase(baseUrl, 'platform_bench_audit');
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const admin = { email: 'bench-admin@example.com', password: randomBytes(18).toString('base64url') };
const children = [];

const withClient = withSqlClient;

async function startApi(env) {
  await runMigrate('platform', env, { track: children });
  const url = `http://127.0.0.1:${env.PLATFORM_PORT}`;
  await startHttpApp({ label: 'platform-api', script: SERVER, env, url, track: children });
  return url;
}

async function call(url, method, requestPath, { token, body, form } = {}) {
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  let payload;
  if (form) payload = new URLSearchParams(form);
  else if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${url}${requestPath}`, { method, headers, body: payload });
  const text = await res.text();
  if (!res.ok) fail(`${method} ${requestPath}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

const login = async (url, email, password) => (await call(url, 'POST', '/auth/login', { form: { email, password } })).token;

/** A user holding only audit_logs.view_self, made through the API as the bootstrap admin. */
async function selfViewer(url, adminToken) {
  const role = await call(url, 'POST', '/auth/roles', { token: adminToken, body: { name: 'bench-self-viewer' } });
  await call(url, 'PUT', '/auth/roles/acl', { token: adminToken, body: { roleId: role.id, features: ['audit_logs.view_self'] } });
  const user = { email: 'bench-viewer@example.com', password: randomBytes(12).toString('base64url') };
  const created = await call(url, 'POST', '/auth/users', { token: adminToken, body: { ...user, roleIds: [role.id] } });
  return { id: created.id, token: await login(url, user.email, user.password) };
}

/** ROWS action log entries of the admin's tenant, one second apart, two actors alternating. */
async function seed(adminId, viewerId) {
  return withClient(databaseUrl, async (c) => {
    const [{ tenant_id: tenantId, organization_id: organizationId }] = (
      await c.query('SELECT tenant_id, organization_id FROM users WHERE id = $1', [adminId])
    ).rows;
    const started = Date.now();
    await c.query(
      `INSERT INTO action_logs (tenant_id, organization_id, actor_user_id, command_id, action_label, action_type, resource_kind,
         resource_id, execution_state, snapshot_before, snapshot_after, changes, changed_fields, source, created_at, updated_at)
       SELECT $1, $2, CASE WHEN g % 2 = 0 THEN $3::uuid ELSE $4::uuid END, 'auth.roles.update', 'Edit role', 'edit', 'auth.role',
              gen_random_uuid()::text, 'done',
              jsonb_build_object('name', 'role ' || g, 'acls', '[]'::jsonb, 'members', '[]'::jsonb),
              jsonb_build_object('name', 'role ' || g || 'b', 'acls', '[]'::jsonb, 'members', '[]'::jsonb),
              jsonb_build_object('name', jsonb_build_object('from', 'role ' || g, 'to', 'role ' || g || 'b')),
              '{name}', 'api', now() - make_interval(secs => g), now() - make_interval(secs => g)
         FROM generate_series(1, $5::int) AS g`,
      [tenantId, organizationId, adminId, viewerId, ROWS],
    );
    const insertMs = Date.now() - started;
    // What autovacuum does shortly after a bulk load: index-only scans need the visibility map.
    await c.query('VACUUM ANALYZE action_logs');
    return { tenantId, insertMs };
  });
}

/**
 * The plans of the id selection the repository runs for a deep page (AuditLogsRepository.listActions:
 * the page's ids through the (tenant_id, created_at, id) index, then a join for those rows only):
 * the last page is read from the other end (reverse order, offset 0), the middle page forward.
 */
async function explainDeepPages(tenantId) {
  const half = Math.ceil(DEEP_PAGE / 2);
  const pages = [
    { name: `page ${DEEP_PAGE} (last, read from the end)`, order: 'a.created_at ASC, a.id ASC', offset: 0 },
    { name: `page ${half} (middle)`, order: 'a.created_at DESC, a.id DESC', offset: (half - 1) * PAGE_SIZE },
  ];
  return withClient(databaseUrl, async (c) => {
    const plans = [];
    for (const page of pages) {
      const { rows } = await c.query(
        `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON)
         SELECT a.id FROM action_logs a WHERE a.tenant_id = $1 ORDER BY ${page.order} LIMIT ${PAGE_SIZE} OFFSET ${page.offset}`,
        [tenantId],
      );
      plans.push({ page: page.name, plan: rows.map((r) => r['QUERY PLAN']) });
    }
    return plans;
  });
}

function summary(r) {
  return {
    reqPerSec: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
  };
}

async function cannon(options) {
  const warmup = WARMUP > 0 ? { warmup: { connections: CONNECTIONS, duration: WARMUP } } : {};
  return summary(await autocannon({ connections: CONNECTIONS, duration: DURATION, ...warmup, ...options }));
}

const get = (url, requestPath, token) =>
  cannon({ url: `${url}${requestPath}`, headers: token ? { authorization: `Bearer ${token}` } : {} });

/** PUT renames spread over `roleIds` (one per connection), a unique name per request. */
function putRenames(url, requestPath, token, roleIds, tag) {
  let n = 0;
  return cannon({
    url: `${url}${requestPath}`,
    requests: [
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ id: roleIds[n % roleIds.length], name: `${tag}-${n++}` }) }),
      },
    ],
  });
}

/** `CONNECTIONS` workers calling `op(worker, i)` back to back for `seconds`: operations per second. */
async function loop(op, seconds) {
  let done = 0;
  let failed = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, worker) => {
      for (let i = 0; Date.now() < until; i++) {
        try {
          await op(worker, i);
          done++;
        } catch (err) {
          if (failed++ === 0) console.error(`bench: operation failed: ${err.message}`);
        }
      }
    }),
  );
  return { opsPerSec: Math.round(done / seconds), failed };
}

async function measureLoop(op) {
  if (WARMUP > 0) await loop(op, WARMUP);
  return loop(op, DURATION);
}

/**
 * Runs `a` and `b` ROUNDS times each, alternating which goes first, so load from outside the bench
 * (or a growing table) weighs on both alike; answers the median rate of each and every run.
 */
async function alternate(a, b, rate) {
  const runs = { a: [], b: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
    for (const key of order) runs[key].push(await (key === 'a' ? a : b)());
  }
  const median = (list) => {
    const sorted = list.map(rate).sort((x, y) => x - y);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : Math.round((sorted[mid - 1] + sorted[mid]) / 2);
  };
  return { a: { median: median(runs.a), runs: runs.a }, b: { median: median(runs.b), runs: runs.b } };
}

/** 3a: both updates over HTTP against the same server. */
async function httpRoleUpdates(url, adminToken) {
  const roleIds = [];
  for (let i = 0; i < CONNECTIONS; i++)
    roleIds.push((await call(url, 'POST', '/auth/roles', { token: adminToken, body: { name: `bench-http-${i}` } })).id);
  let round = 0;
  const { a: direct, b: bus } = await alternate(
    () => putRenames(url, '/bench/direct-role-update', adminToken, roleIds, `direct-${round++}`),
    () => putRenames(url, '/auth/roles', adminToken, roleIds, `bus-${round++}`),
    (r) => r.reqPerSec,
  );
  return { direct, bus, roleIds };
}

/** 3b: the API's modules booted in this process (no HTTP); each worker renames its own role. */
async function inProcessRoleUpdates(env, adminId, tenantId) {
  for (const [key, value] of Object.entries(env)) process.env[key] = value;
  const load = (p) => import(pathToFileURL(path.join(API_DIST, p)).href);
  await import('reflect-metadata');
  const { NestFactory } = await import('@nestjs/core');
  const { DataSource } = await import('typeorm');
  const { loadPlatformConfig } = await load('config/platform-config.js');
  const { AppModule } = await load('app.module.js');
  const { AuthContext } = await load('core/auth/auth-context.js');
  const { reachOf } = await load('core/scope/tenant-reach.js');
  const { RolesService } = await load('modules/roles/roles.service.js');
  const { RolesRepository } = await load('modules/roles/roles.repository.js');
  const { AccessCacheService } = await load('core/auth/access-cache.service.js');
  const { EventBus } = await load('core/events/event-bus.service.js');

  const app = await NestFactory.createApplicationContext(AppModule.forRoot(loadPlatformConfig({ ...env, LOG_LEVEL: 'error' })), {
    logger: false,
  });
  await app.init();
  try {
    const roles = app.get(RolesService);
    const repo = app.get(RolesRepository);
    const cache = app.get(AccessCacheService);
    const events = app.get(EventBus);
    const ds = app.get(DataSource);
    const auth = new AuthContext(adminId, tenantId, null, randomUUID(), {
      isSuperAdmin: true,
      features: ['*'],
      organizations: null,
      roleIds: [],
      roleNames: [],
      hasCustomAcl: false,
    });
    const reach = reachOf(auth);
    const roleIds = [];
    for (let w = 0; w < CONNECTIONS; w++) roleIds.push(await repo.insert(ds, { tenantId, name: `bench-inproc-${w}` }));
    let round = 0;
    const name = (w, i) => `inproc-${round}-${w}-${i}`;
    const direct = async (w, i) => {
      await ds.transaction(async (tx) => {
        const role = await repo.findInScope(tx, reach, { id: roleIds[w], lock: 'no key update' });
        await repo.rename(tx, { role, name: name(w, i) });
      });
      await cache.invalidateAcls();
      await events.emit({ id: 'auth.role.updated', tenantId, organizationId: null, payload: { id: roleIds[w] } }).catch(() => undefined);
    };
    const viaBus = (w, i) => roles.update(auth, { id: roleIds[w], name: name(w, i) });
    const { a, b } = await alternate(
      () => (round++, measureLoop(direct)),
      () => (round++, measureLoop(viaBus)),
      (r) => r.opsPerSec,
    );
    return { direct: a, bus: b };
  } finally {
    await app.close();
  }
}

/** 3c: the bare UPDATE with pg on the roles of 3a, one per worker, at the same concurrency. */
async function bareSqlUpdates(roleIds) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: CONNECTIONS });
  try {
    return await measureLoop((w, i) =>
      pool.query('UPDATE roles SET name = $2, updated_at = now() WHERE id = $1', [roleIds[w % roleIds.length], `sql-${w}-${i}`]),
    );
  } finally {
    await pool.end();
  }
}

async function main() {
  await requirePrerequisites({ apps: ['platform'], kinds: ['api', 'migrate'], databaseUrl: baseUrl, redisUrl });
  await dropDatabase(databaseUrl);

  const env = {
    ...process.env,
    LOG_LEVEL: 'warn',
    PLATFORM_PORT: String(await freePort()),
    PLATFORM_DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: `bench-audit-${randomBytes(4).toString('hex')}`,
    PLATFORM_BOOTSTRAP_ADMIN_EMAIL: admin.email,
    PLATFORM_BOOTSTRAP_ADMIN_PASSWORD: admin.password,
  };
  const url = await startApi(env);
  const adminToken = await login(url, admin.email, admin.password);
  const adminId = (await withClient(databaseUrl, (c) => c.query('SELECT id FROM users WHERE email = $1', [admin.email]))).rows[0].id;
  const viewer = await selfViewer(url, adminToken);
  console.log(`bench: seeding ${ROWS} action log entries`);
  const { tenantId, insertMs } = await seed(adminId, viewer.id);
  console.log(
    `bench: seeded in ${insertMs} ms; ${CONNECTIONS} connections, ${DURATION} s per measurement (+${WARMUP} s warm-up), ${ROUNDS} rounds for comparisons`,
  );

  const plans = await explainDeepPages(tenantId);
  for (const { page, plan } of plans) console.log(`bench: EXPLAIN of the id selection, ${page}:\n  ${plan.join('\n  ')}`);

  const list = (query) => `/audit_logs/audit-logs/actions?${query}`;
  const deep = list(`page=${DEEP_PAGE}&pageSize=${PAGE_SIZE}`);
  const check = await call(url, 'GET', deep, { token: adminToken });
  if (check.items.length === 0 || check.total < ROWS) fail(`deep page is empty or total ${check.total} < ${ROWS}`);

  const reads = [];
  const record = (name, r, baseline) => {
    const row = { name, ...r, ratioToHealthz: baseline ? Math.round((r.reqPerSec / baseline) * 100) / 100 : 1 };
    reads.push(row);
    console.log(`bench: ${name}: ${r.reqPerSec} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, non-2xx ${r.non2xx}`);
    return row;
  };
  const healthz = record('GET /healthz', await get(url, '/healthz'));
  const half = Math.ceil(DEEP_PAGE / 2);
  record(
    `actions page=1 pageSize=${PAGE_SIZE} (tenant viewer)`,
    await get(url, list(`pageSize=${PAGE_SIZE}`), adminToken),
    healthz.reqPerSec,
  );
  record(`actions page=${DEEP_PAGE} pageSize=${PAGE_SIZE} (tenant viewer)`, await get(url, deep, adminToken), healthz.reqPerSec);
  record(
    `actions page=${half} pageSize=${PAGE_SIZE} (tenant viewer, middle)`,
    await get(url, list(`page=${half}&pageSize=${PAGE_SIZE}`), adminToken),
    healthz.reqPerSec,
  );
  record(
    `actions page=${DEEP_PAGE} pageSize=${PAGE_SIZE} includeTotal=false`,
    await get(url, `${deep}&includeTotal=false`, adminToken),
    healthz.reqPerSec,
  );
  record(
    `actions page=${half} pageSize=${PAGE_SIZE} (self viewer, last of ${ROWS / 2})`,
    await get(url, list(`page=${half}&pageSize=${PAGE_SIZE}`), viewer.token),
    healthz.reqPerSec,
  );

  console.log('bench: role updates over HTTP, command bus vs direct');
  const overHttp = await httpRoleUpdates(url, adminToken);
  console.log('bench: role updates in process, command bus vs direct');
  const inProcess = await inProcessRoleUpdates(env, adminId, tenantId);
  console.log('bench: bare UPDATE roles with pg');
  const bareSql = await bareSqlUpdates(overHttp.roleIds);

  const cost = (r) => Math.round((1 - r.bus.median / r.direct.median) * 1000) / 10;
  printTable(
    ['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'ratio to /healthz'],
    reads.map((r) => [r.name, r.reqPerSec, r.p50Ms, r.p99Ms, r.non2xx, r.ratioToHealthz.toFixed(2)]),
  );
  const runs = (r) => r.runs.map((x) => x.reqPerSec ?? x.opsPerSec).join(' / ');
  const failed = (r) => r.runs.reduce((n, x) => n + (x.non2xx ?? 0) + (x.errors ?? 0) + (x.timeouts ?? 0) + (x.failed ?? 0), 0);
  printTable(
    [`role update (${CONNECTIONS} concurrent)`, 'ops/s (median)', 'runs', 'failed', 'log cost'],
    [
      ['HTTP: PUT /bench/direct-role-update (no bus)', overHttp.direct.median, runs(overHttp.direct), failed(overHttp.direct), ''],
      ['HTTP: PUT /auth/roles (command bus)', overHttp.bus.median, runs(overHttp.bus), failed(overHttp.bus), `${cost(overHttp)}%`],
      ['in process: direct write', inProcess.direct.median, runs(inProcess.direct), failed(inProcess.direct), ''],
      [
        'in process: RolesService.update (command bus)',
        inProcess.bus.median,
        runs(inProcess.bus),
        failed(inProcess.bus),
        `${cost(inProcess)}%`,
      ],
      ['context: bare pg UPDATE roles loop', bareSql.opsPerSec, '', bareSql.failed, ''],
    ],
  );
  console.log(
    `\nthe action log costs ${cost(overHttp)}% of role update throughput end to end (target <= 25%), ${cost(inProcess)}% of the bare write path;`,
  );
  console.log(
    `PUT /auth/roles runs at ${(overHttp.bus.median / bareSql.opsPerSec).toFixed(2)} x the bare UPDATE loop (HTTP, auth, validation and the bus together)`,
  );

  writeBenchResult(
    RESULTS_FILE,
    {
      seedInsertMs: insertMs,
      reads,
      deepPagePlans: plans,
      roleUpdates: {
        overHttp: { direct: overHttp.direct, bus: overHttp.bus },
        inProcess,
        bareSql,
        logCostPercent: { overHttp: cost(overHttp), inProcess: cost(inProcess) },
      },
    },
    { connections: CONNECTIONS, durationSeconds: DURATION, warmupSeconds: WARMUP, rounds: ROUNDS, rows: ROWS },
  );
  console.log(`written: ${path.relative(process.cwd(), RESULTS_FILE)}`);
}

function printTable(header, rows) {
  const cells = rows.map((row) => row.map(String));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (row) => `| ${row.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  console.log(`\n${line(header)}\n| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`);
  for (const c of cells) console.log(line(c));
}

let cleaning;
const cleanup = () =>
  (cleaning ??= (async () => {
    await stopProcesses(children, 10_000);
    await dropDatabase(databaseUrl).catch((err) => console.error(`could not drop platform_bench_audit: ${err.message}`));
  })());
await runBenchScript('bench', main, cleanup);
