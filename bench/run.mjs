#!/usr/bin/env node
// `npm run bench` (the root script builds first): starts platform-api and mail-api on free ports
// against the running Postgres and Redis, with fresh databases `platform_bench` / `mail_bench`, loads
// each scenario below with autocannon, prints a table, writes bench/results/latest.json, and always
// stops the APIs and drops the bench databases. See bench/README.md for the knobs.
import autocannon from 'autocannon';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  APPS,
  REPO_ROOT,
  describeExit,
  entryPoint,
  missingEntryPoints,
  parseAppList,
  spawnNode,
  stopProcesses,
  withDatabase,
} from '../scripts/lib/apps.mjs';
import { deleteRedisKeys, dropDatabase } from '../scripts/lib/databases.mjs';
import { freePort, httpOk, redactUrl, redisPing, sleep, tcpAccepts, waitUntil } from '../scripts/lib/probes.mjs';
import { cpuAccountingAvailable, cpuPerRequest, cpuSnapshot, processCpuUs } from './lib/cpu-accounting.mjs';
import { formatSummary, profiledEnv, summarizeProfile, takeProfile } from './lib/cpu-profile-summary.mjs';
import { writeBenchResult } from './lib/results.mjs';
import { fail, runBenchScript } from './lib/run-script.mjs';

/**
 * Setup of the send scenarios: the sending domain is inserted as VERIFIED (DNS verification is not
 * what is measured); the key pair is a throwaway.
 */
async function verifiedSendingDomain(ctx) {
  const { generateKeyPairSync } = await import('node:crypto');
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await ctx.sql(
    'mail',
    `INSERT INTO domains (project_id, domain, status, verification_token, dkim_selector, dkim_private_key, dkim_public_key, verified_at)
     SELECT id, 'bench.example.com', 'VERIFIED', 'bench', 'bench', $1, $2, now() FROM projects
     ON CONFLICT DO NOTHING`,
    [privateKey.export({ type: 'pkcs8', format: 'pem' }), publicKey.export({ type: 'spki', format: 'der' }).toString('base64')],
  );
  return { headers: await ctx.mailAuthHeaders() };
}

/**
 * What is measured. Append entries to add endpoints:
 *   { app: 'platform' | 'mail', name, method, path, headers?, body?, setup?: async (ctx) => overrides }
 * `body` may be a string or an object (sent as JSON); `[<id>]` in it becomes a random id per request.
 * `setup` runs once before the scenario and may return { headers?, body?, path?, method? } merged over
 * the entry, e.g. an Authorization header:
 *   setup: async (ctx) => ({ headers: await ctx.platformAuthHeaders() })
 * ctx: { urls, credentials, request(app, method, path, { headers, body, form }), platformAuthHeaders(), mailAuthHeaders() }.
 * Each app's `GET /healthz` runs first and is that app's baseline (added when not listed).
 */
const SCENARIOS = [
  // The HTTP stack's own baseline: a plain Express 5 app answering the same JSON (no Nest, no logs).
  { app: 'express', name: 'GET /healthz (plain Express 5)', method: 'GET', path: '/healthz' },
  // What plain Express itself allows the two authenticated platform shapes below (issue #18's bounds).
  {
    app: 'express',
    name: 'GET /auth/profile (plain Express 5, HS256 bearer)',
    method: 'GET',
    path: '/auth/profile',
    setup: async (ctx) => ({ headers: ctx.plainExpressAuthHeaders() }),
  },
  {
    app: 'express',
    name: 'POST /auth/feature-check (plain Express 5, HS256 bearer, JSON body)',
    method: 'POST',
    path: '/auth/feature-check',
    body: { features: ['auth.roles.list', 'auth.users.list', 'directory.tenants.manage'] },
    setup: async (ctx) => ({ headers: ctx.plainExpressAuthHeaders() }),
  },
  { app: 'platform', name: 'GET /healthz', method: 'GET', path: '/healthz' },
  { app: 'platform', name: 'GET /readyz', method: 'GET', path: '/readyz' },
  // Issue 3: authenticated reads must not query Postgres per request once the ACL is cached.
  {
    app: 'platform',
    name: 'GET /auth/profile',
    method: 'GET',
    path: '/auth/profile',
    targetRatio: 0.75,
    boundBy: { app: 'express', name: 'GET /auth/profile (plain Express 5, HS256 bearer)' },
    setup: async (ctx) => ({ headers: await ctx.platformAuthHeaders() }),
  },
  {
    app: 'platform',
    name: 'POST /auth/feature-check',
    method: 'POST',
    path: '/auth/feature-check',
    targetRatio: 0.75,
    boundBy: { app: 'express', name: 'POST /auth/feature-check (plain Express 5, HS256 bearer, JSON body)' },
    body: { features: ['auth.roles.list', 'auth.users.list', 'directory.tenants.manage'] },
    setup: async (ctx) => ({ headers: await ctx.platformAuthHeaders() }),
  },
  // Logins are argon2-bound. Each request comes from another (forwarded) client address so the
  // per-IP login limit does not turn the run into a measurement of 429s.
  {
    app: 'platform',
    name: 'POST /auth/login (argon2id)',
    method: 'POST',
    path: '/auth/login',
    setup: async (ctx) => ({
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        email: ctx.credentials.platformAdmin.email,
        password: ctx.credentials.platformAdmin.password,
      }).toString(),
    }),
    perRequestHeaders: () => ({ 'x-forwarded-for': `10.${rnd()}.${rnd()}.${rnd()}` }),
  },
  { app: 'mail', name: 'GET /healthz', method: 'GET', path: '/healthz' },
  { app: 'mail', name: 'GET /readyz', method: 'GET', path: '/readyz' },
  // Issue 6: tracking writes a contact upsert and an event in one statement; pages of contacts are keyset reads.
  {
    app: 'mail',
    name: 'POST /v1/track (new contact)',
    method: 'POST',
    path: '/v1/track',
    body: '{"email":"u[<id>]@example.com","event":"signed-up","data":{"plan":"trial","source":{"value":"bench","persistent":false}}}',
    headers: { 'content-type': 'application/json' },
    setup: async (ctx) => ({ headers: await ctx.mailAuthHeaders() }),
  },
  {
    app: 'mail',
    name: 'POST /v1/track (existing contact)',
    method: 'POST',
    path: '/v1/track',
    body: {
      email: 'bench-existing@example.com',
      event: 'page-viewed',
      data: { plan: 'pro', path: { value: '/pricing', persistent: false } },
    },
    setup: async (ctx) => {
      const headers = await ctx.mailAuthHeaders();
      const res = await ctx.request('mail', 'POST', '/contacts', {
        headers,
        body: { email: 'bench-existing@example.com', data: { plan: 'pro' } },
      });
      if (res.status !== 201 && res.status !== 200) throw new Error(`mail contact setup failed: ${res.status} ${res.text.slice(0, 200)}`);
      return { headers };
    },
  },
  {
    app: 'mail',
    name: 'GET /contacts?limit=20',
    method: 'GET',
    path: '/contacts?limit=20',
    targetRatio: 0.6,
    // One Postgres and one Redis round trip, as /readyz makes (a page also reads rows and checks the key).
    boundBy: { app: 'mail', name: 'GET /readyz' },
    setup: async (ctx) => ({ headers: await ctx.mailAuthHeaders() }),
  },
  // Issue 7 (after the contact list, whose exact `total` would count the contacts the sends create):
  // a send validates, upserts the contact, writes the email row (one transaction) and enqueues
  // it; the bench runs no worker, so this is the API side alone. The sending domain is inserted as
  // VERIFIED (DNS verification is not what is measured); the key pair is a throwaway.
  {
    app: 'mail',
    name: 'POST /v1/send (one recipient)',
    method: 'POST',
    path: '/v1/send',
    targetRatio: 0.4,
    boundBy: { app: 'mail', name: 'GET /readyz' },
    body: '{"to":"r[<id>]@example.com","from":{"name":"Bench","email":"bench@bench.example.com"},"subject":"Hello {{name}}","body":"<p>Hi {{name}}, your code is {{code}}.</p>","data":{"name":"Ada","code":"123456"}}',
    headers: { 'content-type': 'application/json' },
    setup: verifiedSendingDomain,
  },
  // Issue 18: a send to 50 recipients (the most one request takes); the figure is emails accepted per second.
  {
    app: 'mail',
    name: 'POST /v1/send (50 recipients)',
    method: 'POST',
    path: '/v1/send',
    emailsPerRequest: 50,
    targetEmailsPerSec: 2000,
    body: JSON.stringify({
      to: Array.from({ length: 50 }, (_, i) => `r${i}-[<id>]@example.com`),
      from: { name: 'Bench', email: 'bench@bench.example.com' },
      subject: 'Hello {{name}}',
      body: '<p>Hi {{name}}, your code is {{code}}.</p>',
      data: { name: 'Ada', code: '123456' },
    }),
    headers: { 'content-type': 'application/json' },
    setup: verifiedSendingDomain,
  },
  // Issue 5: the notification badge is polled by every open page; one index-only count per request.
  {
    app: 'platform',
    name: 'GET /notifications/unread-count',
    method: 'GET',
    path: '/notifications/unread-count',
    targetRatio: 0.6,
    setup: async (ctx) => {
      const headers = await ctx.platformAuthHeaders();
      const me = await ctx.request('platform', 'POST', '/auth/feature-check', { headers, body: { features: ['notifications.create'] } });
      for (let i = 0; i < 20; i += 1) {
        const res = await ctx.request('platform', 'POST', '/notifications', {
          headers,
          body: { type: 'bench.unread', severity: 'info', title: `Bench ${i}`, recipientUserId: me.json?.userId },
        });
        if (res.status !== 201) throw new Error(`notification setup failed: ${res.status} ${res.text.slice(0, 200)}`);
      }
      return { headers };
    },
  },
];

const FILTER = process.env.BENCH_FILTER ?? '';
const rnd = () => Math.floor(Math.random() * 250) + 1;
const QUEUE_PREFIX = 'bench'; // keeps jobs enqueued by the bench away from a running dev worker
// BENCH_RESULTS_FILE: where the JSON goes (default bench/results/latest.json); name a file to commit it.
const RESULTS_FILE = path.resolve(process.env.BENCH_RESULTS_FILE ?? path.join(REPO_ROOT, 'bench', 'results', 'latest.json'));
const sameWorkSettings = () => ({
  sameWorkRounds: Number(process.env.BENCH_SAME_WORK_ROUNDS ?? 3),
  sameWorkSeconds: Number(process.env.BENCH_SAME_WORK_SECONDS ?? 5),
});
// BENCH_CPU_PROF=<dir>: each API runs under V8's sampling profiler (bench/lib/cpu-profiler.mjs); after
// the last scenario the bench takes the profiles and prints each scenario's self-time summary.
// Profiling slows the APIs: use it to see where the time goes, not for the figures.
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null;
const apiProcesses = {};
let accountingRedis;

function positiveNumber(name, fallback, { allowZero = false } = {}) {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !allowZero))
    fail(`${name} must be a positive number (got "${process.env[name]}")`);
  return value;
}

let DURATION;
let CONNECTIONS;
let WARMUP;
const children = [];
const benchDatabases = [];
let redisUrl;

/** Runs `migrate` for each app (it creates the dropped database again), then starts each API. */
async function startApis(apps, credentials) {
  const urls = {};
  const env = {
    ...process.env,
    LOG_LEVEL: 'warn',
    // autocannon on loopback stands in for the proxy in front of the APIs, so the login scenario's
    // X-Forwarded-For gives each request its own client address.
    TRUST_PROXY: '127.0.0.1,::1',
    REDIS_URL: redisUrl,
    QUEUE_PREFIX,
    // The per-project API limit (1000/min) would turn a load test into a count of 429s.
    MAIL_RATE_LIMIT_PER_MINUTE: process.env.MAIL_RATE_LIMIT_PER_MINUTE ?? '100000000',
    PLATFORM_BOOTSTRAP_ADMIN_EMAIL: credentials.platformAdmin.email,
    PLATFORM_BOOTSTRAP_ADMIN_PASSWORD: credentials.platformAdmin.password,
    MAIL_BOOTSTRAP_SECRET_KEY: credentials.mail.secretKey,
    MAIL_BOOTSTRAP_PUBLIC_KEY: credentials.mail.publicKey,
    PLATFORM_MAIL_API_KEY: credentials.mail.secretKey,
  };
  for (const app of apps) {
    const { portVar, databaseVar, database } = APPS[app];
    const port = await freePort();
    urls[app] = `http://127.0.0.1:${port}`;
    env[portVar] = String(port);
    env[databaseVar] = withDatabase(process.env[databaseVar] ?? `postgres://postgres@127.0.0.1:5432/${database}`, `${database}_bench`);
    benchDatabases.push(env[databaseVar]);
    await dropDatabase(env[databaseVar]);
  }
  if (urls.mail) env.PLATFORM_MAIL_API_URL = urls.mail;
  for (const app of apps) {
    const migration = spawnNode(`${app}-migrate`, entryPoint(app, 'migrate'), env);
    children.push(migration);
    const result = await migration.exited;
    if (result.code !== 0) fail(`${app} migrations ${describeExit(result)} (output above)`);
  }
  for (const app of apps) {
    const profiled = CPU_PROF_DIR ? profiledEnv(env, CPU_PROF_DIR, `${app}-api`) : null;
    const api = spawnNode(`${app}-api`, entryPoint(app, 'api'), profiled?.env ?? env);
    children.push(api);
    apiProcesses[app] = { api, profileFile: profiled?.file };
    const healthy = waitUntil(() => httpOk(`${urls[app]}/healthz`), 60_000, 200);
    const outcome = await Promise.race([healthy, api.exited]);
    if (outcome === false) fail(`${app}-api did not answer ${urls[app]}/healthz within 60 s`);
    if (outcome !== true) fail(`${app}-api ${describeExit(outcome)} before answering /healthz (output above)`);
  }
  return urls;
}

/** Asks each profiled API for its profile (SIGUSR2), then prints and keeps each scenario's summary. */
async function collectProfiles(rows) {
  for (const [app, { api, profileFile }] of Object.entries(apiProcesses)) {
    if (!profileFile) continue;
    const profile = await takeProfile(api.child, profileFile);
    for (const row of rows.filter((r) => r.app === app)) {
      row.cpu = summarizeProfile(profile, row.windowUs);
      console.log(formatSummary(`${app} ${row.endpoint}`, row.cpu));
    }
  }
}

const PLAIN_EXPRESS_JWT_SECRET = randomBytes(32).toString('hex');

/**
 * The mail API's same-work baseline (bench/lib/mail-same-work-server.mjs, issue #34) in its own process,
 * on the mail API's bench database and Redis, with the API's rate limit setting.
 */
async function startMailSameWork() {
  const port = await freePort();
  const databaseUrl = benchDatabases.find((u) => new URL(u).pathname.slice(1) === `${APPS.mail.database}_bench`);
  const profiled = CPU_PROF_DIR ? profiledEnv(process.env, CPU_PROF_DIR, 'mail-same-work') : null;
  const server = spawnNode('mail-same-work', path.join(REPO_ROOT, 'bench/lib/mail-same-work-server.mjs'), {
    ...(profiled?.env ?? process.env),
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX,
    MAIL_RATE_LIMIT_PER_MINUTE: process.env.MAIL_RATE_LIMIT_PER_MINUTE ?? '100000000',
  });
  children.push(server);
  apiProcesses.same = { api: server, profileFile: profiled?.file };
  const url = `http://127.0.0.1:${port}`;
  if (!(await waitUntil(() => httpOk(`${url}/healthz`), 10_000, 100))) fail('the mail same-work baseline did not start');
  return url;
}

/** The plain Express 5 baseline in its own process (bench/lib/plain-express-server.mjs). */
async function startPlainExpress() {
  const port = await freePort();
  const server = spawnNode('plain-express', path.join(REPO_ROOT, 'bench/lib/plain-express-server.mjs'), {
    ...process.env,
    PORT: String(port),
    BENCH_PLAIN_JWT_SECRET: PLAIN_EXPRESS_JWT_SECRET,
  });
  children.push(server);
  apiProcesses.express = { api: server };
  const url = `http://127.0.0.1:${port}`;
  if (!(await waitUntil(() => httpOk(`${url}/healthz`), 10_000, 100))) fail('the plain Express baseline did not start');
  return url;
}

function makeContext(urls, credentials) {
  async function request(app, method, requestPath, { headers = {}, body, form } = {}) {
    const init = { method, headers: { ...headers } };
    if (form) init.body = new URLSearchParams(form);
    else if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      init.headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${urls[app]}${requestPath}`, init);
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  }
  let platformToken;
  return {
    urls,
    credentials,
    request,
    /** Logs the bootstrap admin in once (login is rate limited) and returns an Authorization header. */
    async platformAuthHeaders() {
      if (!platformToken) {
        const { email, password } = credentials.platformAdmin;
        const res = await request('platform', 'POST', '/auth/login', { form: { email, password } });
        if (res.status !== 200 || !res.json?.token) fail(`platform login failed: ${res.status} ${res.text.slice(0, 200)}`);
        platformToken = res.json.token;
      }
      return { authorization: `Bearer ${platformToken}` };
    },
    mailAuthHeaders: async () => ({ authorization: `Bearer ${credentials.mail.secretKey}` }),
    /** A bearer token for the plain Express baseline: HS256, the platform's claims (and the email). */
    plainExpressAuthHeaders() {
      const encode = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const now = Math.floor(Date.now() / 1000);
      const claims = { sub: randomUUID(), sid: randomUUID(), tenantId: randomUUID(), orgId: randomUUID(), roles: ['superadmin'] };
      const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ ...claims, email: credentials.platformAdmin.email, iat: now, exp: now + 3600 })}`;
      const signature = createHmac('sha256', PLAIN_EXPRESS_JWT_SECRET).update(unsigned).digest('base64url');
      return { authorization: `Bearer ${unsigned}.${signature}` };
    },
    /** What the CPU accounting reads for an app's scenario: its process, its database's backends, Redis. */
    cpuSources(app) {
      // The mail same-work baseline ('same') works on the mail API's database.
      const dbApp = app === 'same' ? 'mail' : app;
      return {
        apiPid: apiProcesses[app]?.api.child.pid,
        backendPids:
          dbApp in APPS
            ? async () =>
                (
                  await this.sql(dbApp, 'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')
                ).map((r) => r.pid)
            : null,
        redis: dbApp in APPS ? accountingRedis : null,
      };
    },
    /** One statement against an app's bench database (setup that has no API, e.g. a pre-verified domain). */
    async sql(app, text, params = []) {
      const url = benchDatabases.find((u) => new URL(u).pathname.slice(1) === `${APPS[app].database}_bench`);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(text, params)).rows;
      } finally {
        await client.end();
      }
    },
  };
}

/** Per app: its GET /healthz first (the baseline), then the other scenarios in declared order. */
function plan(apps) {
  return ['express', ...apps].flatMap((app) => {
    const own = SCENARIOS.filter((s) => s.app === app);
    const isBaseline = (s) => (s.method ?? 'GET') === 'GET' && s.path === '/healthz';
    const baseline = own.find(isBaseline) ?? { app, name: 'GET /healthz', method: 'GET', path: '/healthz' };
    const others = own.filter((s) => !isBaseline(s) && (s.name ?? s.path).includes(FILTER));
    return [{ ...baseline, baseline: true }, ...others];
  });
}

/**
 * Waits (at most 30 s) until the API process is idle: work a scenario left behind (logins still
 * hashing in the thread pool after autocannon stopped) must not be counted to the next one.
 */
async function settle(pid) {
  if (!cpuAccountingAvailable || !pid) return;
  const deadline = Date.now() + 30_000;
  for (let last = processCpuUs(pid); Date.now() < deadline;) {
    await sleep(250);
    const now = processCpuUs(pid);
    if (now - last < 25_000) return; // under 10% of a core
    last = now;
  }
}

async function measure(scenario, ctx, durationSeconds = DURATION) {
  const overrides = (await scenario.setup?.(ctx)) ?? {};
  const method = overrides.method ?? scenario.method ?? 'GET';
  const headers = { ...scenario.headers, ...overrides.headers };
  let body = overrides.body ?? scenario.body;
  if (body !== undefined && typeof body !== 'string') {
    body = JSON.stringify(body);
    headers['content-type'] ??= 'application/json';
  }
  const url = `${ctx.urls[scenario.app]}${overrides.path ?? scenario.path}`;
  // `[<id>]` in a body: a fresh id per request. Done here, not with autocannon's idReplacement, whose
  // Content-Length assumes a longer id than it generates (the requests then hang).
  const perRequestBody = typeof body === 'string' && body.includes('[<id>]');
  // `perRequestHeaders`: headers that change on every request (e.g. a client address).
  const requests =
    scenario.perRequestHeaders || perRequestBody
      ? [
          {
            setupRequest: (req) => ({
              ...req,
              ...(perRequestBody ? { body: body.replaceAll('[<id>]', randomBytes(12).toString('hex')) } : {}),
              headers: { ...req.headers, ...scenario.perRequestHeaders?.() },
            }),
          },
        ]
      : undefined;
  const load = { url, method, headers, body, requests, connections: CONNECTIONS };
  await settle(ctx.cpuSources(scenario.app).apiPid);
  // The warm-up is a run of its own, so the CPU accounting and the profile window cover the measured run only.
  if (WARMUP > 0) await autocannon({ ...load, duration: WARMUP });
  const cpuBefore = cpuAccountingAvailable ? await cpuSnapshot(ctx.cpuSources(scenario.app)) : null;
  const fromUs = Number(process.hrtime.bigint() / 1000n);
  const result = await autocannon({ ...load, duration: durationSeconds });
  const toUs = Number(process.hrtime.bigint() / 1000n);
  const cpuAfter = cpuBefore ? await cpuSnapshot(ctx.cpuSources(scenario.app)) : null;
  return {
    windowUs: { fromUs, toUs },
    cpuUsPerRequest: cpuBefore ? cpuPerRequest(cpuBefore, cpuAfter, result.requests.total) : null,
    app: scenario.app,
    endpoint: scenario.name ?? `${method} ${scenario.path}`,
    method,
    path: overrides.path ?? scenario.path,
    reqPerSec: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, Number(count)])),
  };
}

/**
 * The HTTP stack's ratio (issue #12: an API's `GET /healthz` against plain Express 5), measured apart
 * from the table: a single 10 s run of each, minutes apart, moved by about +-0.05 with whatever else
 * the machine did meanwhile. BENCH_STACK_ROUNDS rounds (default 3) of BENCH_STACK_SECONDS (default 5)
 * each, Express and each app back to back within a round, in an order that alternates between rounds;
 * the verdict is on the median of the per-round ratios.
 */
async function measureStackRatios(apps, ctx) {
  const rounds = positiveNumber('BENCH_STACK_ROUNDS', 3);
  const seconds = positiveNumber('BENCH_STACK_SECONDS', 5);
  const healthz = (app) => ({ app, name: 'GET /healthz', method: 'GET', path: '/healthz' });
  const ratios = Object.fromEntries(apps.map((app) => [app, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ['express', ...apps] : [...apps, 'express'];
    const reqPerSec = {};
    for (const app of order) reqPerSec[app] = (await measure(healthz(app), ctx, seconds)).reqPerSec;
    for (const app of apps) ratios[app].push(Math.round((reqPerSec[app] / reqPerSec.express) * 100) / 100);
  }
  return Object.fromEntries(
    apps.map((app) => {
      const sorted = [...ratios[app]].sort((a, b) => a - b);
      const middle = Math.floor(sorted.length / 2);
      const median = sorted.length % 2 ? sorted[middle] : Math.round(((sorted[middle - 1] + sorted[middle]) / 2) * 100) / 100;
      return [app, { median, rounds: ratios[app] }];
    }),
  );
}

/**
 * Issue #34: each hot endpoint against its same-work baseline, a plain Express 5 app in its own process
 * doing the least the endpoint must do with the same statements (bench/lib/mail-same-work-server.mjs;
 * feature-check: bench/lib/plain-express-server.mjs). `goal`: the endpoint's req/s over the baseline's.
 */
const SAME_WORK_PAIRS = [
  { app: 'mail', name: 'POST /v1/send (one recipient)', goal: 0.6 },
  { app: 'mail', name: 'POST /v1/track (existing contact)', goal: 0.7 },
  { app: 'mail', name: 'GET /contacts?limit=20', goal: 0.75 },
  {
    app: 'platform',
    name: 'POST /auth/feature-check',
    goal: 0.9,
    baseline: { app: 'express', name: 'POST /auth/feature-check (plain Express 5, HS256 bearer, JSON body)' },
  },
];

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const round2 = (value) => Math.round(value * 100) / 100;

/**
 * BENCH_SAME_WORK_ROUNDS rounds (default 3) of BENCH_SAME_WORK_SECONDS (default 5) per pair, endpoint
 * and baseline back to back, their order alternating between rounds; the verdict is on the median of
 * the per-round ratios (throughput, and CPU per request: the baseline's total over the endpoint's).
 */
async function measureSameWork(apps, ctx, profiledRows = []) {
  const rounds = positiveNumber('BENCH_SAME_WORK_ROUNDS', 3);
  const seconds = positiveNumber('BENCH_SAME_WORK_SECONDS', 5);
  const pairs = SAME_WORK_PAIRS.filter((p) => apps.includes(p.app) && p.name.includes(FILTER));
  const results = [];
  for (const pair of pairs) {
    const endpoint = SCENARIOS.find((s) => s.app === pair.app && s.name === pair.name);
    const baseline = pair.baseline
      ? SCENARIOS.find((s) => s.app === pair.baseline.app && s.name === pair.baseline.name)
      : { ...endpoint, app: 'same', name: `${endpoint.name} (same-work Express 5)` };
    const perRound = [];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [endpoint, baseline] : [baseline, endpoint];
      const measured = {};
      for (const scenario of order) measured[scenario === endpoint ? 'endpoint' : 'baseline'] = await measure(scenario, ctx, seconds);
      if (round === rounds - 1) profiledRows.push(measured.endpoint, measured.baseline);
      const { endpoint: e, baseline: b } = measured;
      perRound.push({
        endpoint: { reqPerSec: e.reqPerSec, p99Ms: e.p99Ms, non2xx: e.non2xx, cpuUsPerRequest: e.cpuUsPerRequest },
        baseline: { reqPerSec: b.reqPerSec, p99Ms: b.p99Ms, non2xx: b.non2xx, cpuUsPerRequest: b.cpuUsPerRequest },
        ratio: round2(e.reqPerSec / b.reqPerSec),
        cpuRatio: e.cpuUsPerRequest?.total ? round2(b.cpuUsPerRequest.total / e.cpuUsPerRequest.total) : null,
      });
      if (e.non2xx || b.non2xx) console.log(`warning: ${pair.name}: non-2xx endpoint ${e.non2xx}, baseline ${b.non2xx}`);
    }
    const result = {
      app: pair.app,
      endpoint: pair.name,
      baseline: `${baseline.app} ${baseline.name}`,
      goal: pair.goal,
      ratio: round2(median(perRound.map((r) => r.ratio))),
      cpuRatio: perRound.every((r) => r.cpuRatio !== null) ? round2(median(perRound.map((r) => r.cpuRatio))) : null,
      endpointReqPerSec: Math.round(median(perRound.map((r) => r.endpoint.reqPerSec))),
      baselineReqPerSec: Math.round(median(perRound.map((r) => r.baseline.reqPerSec))),
      rounds: perRound,
    };
    result.met = result.ratio >= pair.goal;
    results.push(result);
    console.log(
      `bench: same work: ${pair.app} ${pair.name} / baseline = ${result.ratio} (median of ${rounds} interleaved rounds: ` +
        `${perRound.map((r) => r.ratio).join(', ')}; ${result.endpointReqPerSec} vs ${result.baselineReqPerSec} req/s; cpu ratio ` +
        `${result.cpuRatio}; goal >= ${pair.goal}: ${result.met ? 'met' : 'MISSED'})`,
    );
  }
  if (results.length) {
    printMarkdownTable(
      ['app', 'endpoint', 'req/s', 'baseline req/s', 'ratio', 'cpu ratio', 'goal', 'api us', 'baseline us', 'pg us', 'baseline pg us'],
      results.map((r) => {
        const cpu = (side, key) => String(Math.round(median(r.rounds.map((x) => x[side].cpuUsPerRequest?.[key] ?? 0))));
        return [
          r.app,
          r.endpoint,
          String(r.endpointReqPerSec),
          String(r.baselineReqPerSec),
          r.ratio.toFixed(2),
          r.cpuRatio?.toFixed(2) ?? '',
          `>= ${r.goal}`,
          cpu('endpoint', 'api'),
          cpu('baseline', 'api'),
          cpu('endpoint', 'postgres'),
          cpu('baseline', 'postgres'),
        ];
      }),
    );
  }
  return results;
}

function printMarkdownTable(header, cells, leftColumns = 2) {
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i].length)));
  const line = (row) => `| ${row.map((cell, i) => (i < leftColumns ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`;
  console.log(`\n${line(header)}\n| ${widths.map((w, i) => (i < leftColumns ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`);
  for (const row of cells) console.log(line(row));
}

function printTable(rows) {
  const header = ['app', 'endpoint', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'ratio to /healthz'];
  printMarkdownTable(
    header,
    rows.map((r) => [r.app, r.endpoint, r.reqPerSec, r.p50Ms, r.p99Ms, r.non2xx, r.ratioToHealthz.toFixed(2)].map(String)),
  );
  const failing = rows.filter((r) => r.errors || r.timeouts);
  for (const r of failing) console.log(`warning: ${r.app} ${r.endpoint}: ${r.errors} connection errors, ${r.timeouts} timeouts`);
}

/** Where each request's CPU went (bench/lib/cpu-accounting.mjs); Redis is shared, so its column is noisy. */
function printCpuTable(rows) {
  const accounted = rows.filter((r) => r.cpuUsPerRequest);
  if (!accounted.length) return;
  console.log(
    "\nCPU per request, microseconds (api process, its Postgres backends, Redis, autocannon); cpu ratio: the app's GET /healthz total / this total",
  );
  printMarkdownTable(
    ['app', 'endpoint', 'api', 'postgres', 'redis', 'autocannon', 'total', 'cpu ratio'],
    accounted.map((r) => {
      const c = r.cpuUsPerRequest;
      return [r.app, r.endpoint, c.api, c.postgres, c.redis, c.loadGenerator, c.total, r.cpuRatioToHealthz?.toFixed(2) ?? ''].map(String);
    }),
  );
}

/** One line per scenario with a target (issue #18): its ratio, or emails accepted per second. */
function printTargets(rows, scenarios) {
  const missed = [];
  for (const row of rows) {
    const scenario = scenarios.find((s) => s.app === row.app && s.name === row.endpoint);
    if (scenario?.targetRatio !== undefined) {
      const met = row.ratioToHealthz >= scenario.targetRatio;
      if (!met) missed.push(`${row.app} ${row.endpoint}`);
      const cpu = row.cpuRatioToHealthz ? `; cpu ratio ${row.cpuRatioToHealthz}` : '';
      const boundRow = scenario.boundBy && rows.find((r) => r.app === scenario.boundBy.app && r.endpoint === scenario.boundBy.name);
      const bound = boundRow
        ? `; bound: ${boundRow.app} ${boundRow.endpoint} = ${boundRow.ratioToHealthz}` +
          (boundRow.cpuRatioToHealthz ? ` (cpu ${boundRow.cpuRatioToHealthz})` : '')
        : '';
      if (boundRow) row.bound = { app: boundRow.app, endpoint: boundRow.endpoint, ratioToHealthz: boundRow.ratioToHealthz };
      console.log(
        `bench: ${row.app} ${row.endpoint} / GET /healthz = ${row.ratioToHealthz} (target >= ${scenario.targetRatio}: ${met ? 'met' : 'MISSED'}${cpu}${bound})`,
      );
    }
    if (scenario?.emailsPerRequest) {
      row.emailsPerSec = row.reqPerSec * scenario.emailsPerRequest;
      const met = row.emailsPerSec >= scenario.targetEmailsPerSec;
      if (!met) missed.push(`${row.app} ${row.endpoint} emails/s`);
      console.log(
        `bench: ${row.app} ${row.endpoint}: ${row.emailsPerSec} emails accepted/s (target >= ${scenario.targetEmailsPerSec}: ${met ? 'met' : 'MISSED'})`,
      );
    }
  }
  if (missed.length) console.log(`bench: MISSED: ${missed.join(', ')}`);
}

async function checkInfrastructure(apps) {
  for (const app of apps) {
    const { databaseVar, database } = APPS[app];
    const url = new URL(process.env[databaseVar] ?? `postgres://postgres@127.0.0.1:5432/${database}`);
    if (!(await tcpAccepts(url.hostname, Number(url.port || 5432)))) {
      fail(`Postgres is not reachable at ${redactUrl(url)}: start it or set ${databaseVar}`);
    }
  }
  redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  await redisPing(redisUrl).catch((err) =>
    fail(`Redis does not answer at ${redactUrl(redisUrl)} (${err.message}): start it or set REDIS_URL`),
  );
}

let cleaning;
function cleanup() {
  cleaning ??= (async () => {
    await stopProcesses(children, 10_000);
    for (const url of benchDatabases)
      await dropDatabase(url).catch((err) => console.error(`could not drop ${redactUrl(url)}: ${err.message}`));
    accountingRedis?.disconnect();
    if (redisUrl)
      await deleteRedisKeys(redisUrl, QUEUE_PREFIX).catch((err) =>
        console.error(`could not delete Redis keys ${QUEUE_PREFIX}:*: ${err.message}`),
      );
  })();
  return cleaning;
}

async function main() {
  DURATION = positiveNumber('BENCH_DURATION', 10);
  CONNECTIONS = positiveNumber('BENCH_CONNECTIONS', 50);
  WARMUP = positiveNumber('BENCH_WARMUP', 1, { allowZero: true });
  const apps = (() => {
    try {
      return parseAppList(process.env.BENCH_APPS, 'BENCH_APPS');
    } catch (err) {
      return fail(err.message);
    }
  })();
  const missing = missingEntryPoints(apps, ['api', 'migrate']);
  if (missing.length) fail(`Not built: ${missing.join(', ')} (run npm run build; BENCH_APPS=platform or =mail benches one app)`);
  await checkInfrastructure(apps);
  accountingRedis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const credentials = {
    platformAdmin: { email: 'bench-admin@example.com', password: randomBytes(18).toString('base64url') },
    mail: { secretKey: `sk_${randomBytes(24).toString('hex')}`, publicKey: `pk_${randomBytes(24).toString('hex')}` },
  };
  const urls = { ...(await startApis(apps, credentials)), express: await startPlainExpress() };
  if (apps.includes('mail')) urls.same = await startMailSameWork();
  const ctx = makeContext(urls, credentials);
  const rows = [];
  const baselines = {};
  const cpuBaselines = {};
  console.log(`bench: ${CONNECTIONS} connections, ${DURATION} s per scenario (+${WARMUP} s warm-up)`);
  // BENCH_SAME_WORK_ONLY=1: only the same-work pairs (issue #34), without the table and the stack ratios.
  const sameWorkOnly = process.env.BENCH_SAME_WORK_ONLY === '1';
  if (sameWorkOnly) {
    const profiledRows = [];
    const sameWork = await measureSameWork(apps, ctx, profiledRows);
    if (CPU_PROF_DIR) await collectProfiles(profiledRows);
    const report = writeBenchResult(
      RESULTS_FILE,
      { sameWork },
      { connections: CONNECTIONS, warmupSeconds: WARMUP, filter: FILTER || null, sameWorkOnly: true, ...sameWorkSettings() },
    );
    console.log(
      `\nwritten: ${path.relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE} (load average ${report.loadAverage.atStart} -> ${report.loadAverage.atEnd})`,
    );
    return;
  }
  for (const scenario of plan(apps)) {
    const row = await measure(scenario, ctx);
    if (scenario.baseline) baselines[row.app] = row.reqPerSec;
    row.ratioToHealthz = baselines[row.app] ? Math.round((row.reqPerSec / baselines[row.app]) * 100) / 100 : 0;
    if (scenario.baseline) cpuBaselines[row.app] = row.cpuUsPerRequest?.total;
    if (row.cpuUsPerRequest?.total && cpuBaselines[row.app])
      row.cpuRatioToHealthz = Math.round((cpuBaselines[row.app] / row.cpuUsPerRequest.total) * 100) / 100;
    rows.push(row);
    console.log(`bench: ${row.app} ${row.endpoint}: ${row.reqPerSec} req/s, p99 ${row.p99Ms} ms, non-2xx ${row.non2xx}`);
  }
  printTable(rows);
  printCpuTable(rows);
  printTargets(rows, SCENARIOS);
  if (CPU_PROF_DIR) await collectProfiles(rows);
  const express = rows.find((r) => r.app === 'express');
  const healthzRows = rows.filter((r) => r.app !== 'express' && r.path === '/healthz' && r.method === 'GET');
  for (const row of healthzRows) row.ratioToPlainExpress = Math.round((row.reqPerSec / express.reqPerSec) * 100) / 100;
  const stackRatios = await measureStackRatios(apps, ctx);
  for (const row of healthzRows) {
    const { median, rounds } = stackRatios[row.app];
    row.stackRatio = { median, rounds };
    const verdict = median >= 0.75 ? 'met' : 'MISSED';
    console.log(
      `bench: ${row.app} GET /healthz / plain Express 5 = ${median} (median of ${rounds.length} interleaved rounds: ${rounds.join(', ')}; ` +
        `in the table's run ${row.ratioToPlainExpress}; target >= 0.75: ${verdict})`,
    );
  }
  const sameWork = await measureSameWork(apps, ctx);
  const report = writeBenchResult(
    RESULTS_FILE,
    { results: rows, sameWork },
    { connections: CONNECTIONS, durationSeconds: DURATION, warmupSeconds: WARMUP, filter: FILTER || null, ...sameWorkSettings() },
  );
  console.log(
    `\nwritten: ${path.relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE} (load average ${report.loadAverage.atStart} -> ${report.loadAverage.atEnd})`,
  );
}

await runBenchScript('bench', main, cleanup);
