#!/usr/bin/env node
// `npm run load` (issue #19, 4): both APIs and both workers from dist/ against fresh databases
// (`platform_load`, `mail_load`), then LOAD_CLIENTS (200) concurrent clients per service for
// LOAD_SECONDS (60) on a mixed workload of reads, writes, sends and tracks. Prints errors (any non-2xx
// or socket error), p50/p99 and requests/s per service, and the APIs' RSS sampled every 5 s. Exits 1
// on any error. `npm run soak` is the same for 10 minutes and also fails when an API's memory keeps
// growing (RSS of the last minute over the second minute's by more than SOAK_MAX_GROWTH, 15%).
// Writes bench/results/load.json (soak: soak.json) through bench/lib/results.mjs (commit, machine, load
// average, settings), pass or fail: docs quote only these files.
import autocannon from 'autocannon';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { APPS, describeExit, entryPoint, spawnNode, stopProcesses, withDatabase } from '../scripts/lib/apps.mjs';
import { sqlQuery } from '../scripts/lib/databases.mjs';
import { freePort, httpOk, sleep, waitUntil } from '../scripts/lib/probes.mjs';
import { writeBenchResult } from './lib/results.mjs';
import { fail, runBenchScript } from './lib/run-script.mjs';

const SECONDS = Number(process.env.LOAD_SECONDS ?? 60);
const CLIENTS = Number(process.env.LOAD_CLIENTS ?? 200);
const SOAK = process.env.SOAK === '1';
const MAX_GROWTH = Number(process.env.SOAK_MAX_GROWTH ?? 0.15);
const children = [];
const databases = [];

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function recreate(url) {
  const name = new URL(url).pathname.slice(1);
  const admin = withDatabase(url, 'postgres');
  await sqlQuery(admin, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  databases.push({ admin, name });
}

async function start() {
  const credentials = {
    email: `load-admin-${randomBytes(3).toString('hex')}@example.com`,
    password: randomBytes(12).toString('hex'),
    secretKey: `sk_${randomBytes(24).toString('hex')}`,
    publicKey: `pk_${randomBytes(24).toString('hex')}`,
  };
  const env = {
    ...process.env,
    LOG_LEVEL: 'warn',
    QUEUE_PREFIX: `load-${randomBytes(3).toString('hex')}`,
    MAIL_RATE_LIMIT_PER_MINUTE: '100000000',
    PLATFORM_BOOTSTRAP_ADMIN_EMAIL: credentials.email,
    PLATFORM_BOOTSTRAP_ADMIN_PASSWORD: credentials.password,
    MAIL_BOOTSTRAP_SECRET_KEY: credentials.secretKey,
    MAIL_BOOTSTRAP_PUBLIC_KEY: credentials.publicKey,
    PLATFORM_MAIL_API_KEY: credentials.secretKey,
  };
  const urls = {};
  for (const app of ['mail', 'platform']) {
    const { portVar, databaseVar, database } = APPS[app];
    const port = await freePort();
    urls[app] = `http://127.0.0.1:${port}`;
    env[portVar] = String(port);
    env[databaseVar] = withDatabase(process.env[databaseVar] ?? `postgres://postgres@127.0.0.1:5432/${database}`, `${database}_load`);
    await recreate(env[databaseVar]);
    const migrate = spawnNode(`${app}-migrate`, entryPoint(app, 'migrate'), env);
    children.push(migrate);
    const result = await migrate.exited;
    if (result.code !== 0) fail(`${app} migrations ${describeExit(result)}`);
  }
  env.PLATFORM_MAIL_API_URL = urls.mail;
  const apis = {};
  for (const app of ['mail', 'platform']) {
    const api = spawnNode(`${app}-api`, entryPoint(app, 'api'), env);
    children.push(api, spawnNode(`${app}-worker`, entryPoint(app, 'worker'), env));
    apis[app] = api;
    if (!(await waitUntil(() => httpOk(`${urls[app]}/readyz`), 60_000, 200))) fail(`${app}-api not ready`);
  }
  return { urls, apis, env, credentials };
}

async function platformWorkload(urls, credentials) {
  const login = await fetch(`${urls.platform}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: credentials.email, password: credentials.password }),
  });
  const { token } = await login.json();
  if (!token) fail(`platform login failed: ${login.status}`);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const userId = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sub;
  return [
    { method: 'GET', path: '/auth/profile', headers },
    { method: 'POST', path: '/auth/feature-check', headers, body: JSON.stringify({ features: ['auth.roles.list'] }) },
    { method: 'GET', path: '/notifications/unread-count', headers },
    { method: 'GET', path: '/auth/roles?pageSize=20', headers },
    { method: 'GET', path: '/notifications?pageSize=20', headers },
    { method: 'PUT', path: '/auth/sidebar/preferences', headers, body: JSON.stringify({ settings: { groupOrder: [] } }) },
    {
      method: 'POST',
      path: '/notifications',
      headers,
      body: JSON.stringify({ recipientUserId: userId, type: 'load', title: 'load test', severity: 'info' }),
    },
  ];
}

async function mailWorkload(urls, env, credentials) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await sqlQuery(
    env.MAIL_DATABASE_URL,
    `INSERT INTO domains (project_id, domain, status, verification_token, dkim_selector, dkim_private_key, dkim_public_key, verified_at)
     SELECT id, 'load.example.com', 'VERIFIED', 'load', 'load', $1, $2, now() FROM projects ON CONFLICT DO NOTHING`,
    [privateKey.export({ type: 'pkcs8', format: 'pem' }), publicKey.export({ type: 'spki', format: 'der' }).toString('base64')],
  );
  const headers = { authorization: `Bearer ${credentials.secretKey}`, 'content-type': 'application/json' };
  let n = 0;
  const email = () => `load-${(n = (n + 1) % 5000)}@example.com`;
  return [
    {
      method: 'POST',
      path: '/v1/track',
      headers,
      setupRequest: (r) => ({ ...r, body: JSON.stringify({ email: email(), event: 'load.seen' }) }),
    },
    { method: 'GET', path: '/contacts?limit=20', headers },
    {
      method: 'POST',
      path: '/contacts',
      headers,
      setupRequest: (r) => ({ ...r, body: JSON.stringify({ email: email(), data: { plan: 'load' } }) }),
    },
    {
      method: 'POST',
      path: '/v1/send',
      headers,
      setupRequest: (r) => ({
        ...r,
        body: JSON.stringify({ from: 'app@load.example.com', to: email(), subject: 'Load {{email}}', body: '<p>hi</p>' }),
      }),
    },
    { method: 'GET', path: '/templates?limit=20', headers },
    { method: 'GET', path: '/events/names', headers },
  ];
}

/** The first few non-2xx answers, with their request, so an error is explained, not only counted. */
const firstFailures = [];

function run(url, requests, seconds) {
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url, connections: CLIENTS, duration: seconds, requests, timeout: 30 }, (err, result) =>
      err ? reject(err) : resolve(result),
    );
    instance.on('response', (client, statusCode) => {
      if (statusCode >= 300 && firstFailures.length < 5)
        firstFailures.push(`${statusCode} ${url} ${client.opts?.method ?? ''} ${client.opts?.path ?? ''}`);
    });
    instance.on('error', reject);
  });
}

async function main() {
  const { urls, apis, env, credentials } = await start();
  const workloads = { platform: await platformWorkload(urls, credentials), mail: await mailWorkload(urls, env, credentials) };
  // Each request once, alone: a workload that is wrong fails here with its answer, not as a count.
  for (const [app, requests] of Object.entries(workloads)) {
    for (const r of requests) {
      const req = r.setupRequest ? r.setupRequest({ ...r }) : r;
      const res = await fetch(urls[app] + req.path, { method: req.method, headers: req.headers, body: req.body });
      if (!res.ok) fail(`${app} ${req.method} ${req.path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    }
  }
  const samples = { platform: [], mail: [] };
  const sampler = setInterval(() => {
    for (const app of ['platform', 'mail']) samples[app].push(rssMb(apis[app].child.pid));
  }, 5000);
  let failed = false;
  const rows = [];
  try {
    // Soak: both services at once for the whole time. Load: one service after the other.
    const plan = SOAK ? [['platform', 'mail']] : [['platform'], ['mail']];
    for (const apps of plan) {
      const results = await Promise.all(apps.map((app) => run(urls[app], workloads[app], SECONDS)));
      apps.forEach((app, i) => {
        const r = results[i];
        const errors = r.errors + r.timeouts + r.non2xx;
        if (r.non2xx > 0) console.log(`${app}: status codes ${JSON.stringify(r.statusCodeStats)}`);
        if (errors > 0) failed = true;
        rows.push({
          service: app,
          clients: CLIENTS,
          seconds: SECONDS,
          requests: r.requests.total,
          'req/s': Math.round(r.requests.average),
          'p50 ms': r.latency.p50,
          'p99 ms': r.latency.p99,
          errors: `${errors} (${r.non2xx} non-2xx, ${r.errors} socket, ${r.timeouts} timeouts)`,
        });
      });
    }
  } finally {
    clearInterval(sampler);
  }
  console.table(rows);
  for (const line of firstFailures) console.log(`failure: ${line}`);
  const memory = {};
  for (const app of ['platform', 'mail']) {
    const s = samples[app];
    const perMinute = 60 / 5;
    const early = s.slice(perMinute, perMinute * 2);
    const late = s.slice(-perMinute);
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const growth = early.length > 0 ? mean(late) / mean(early) - 1 : 0;
    console.log(
      `${app}-api RSS MB: start ${s[0]?.toFixed(0)}, max ${Math.max(...s).toFixed(0)}, end ${s.at(-1)?.toFixed(0)}` +
        (SOAK ? `; last minute vs second minute ${(growth * 100).toFixed(1)}% (limit ${(MAX_GROWTH * 100).toFixed(0)}%)` : ''),
    );
    memory[app] = {
      rssMbStart: Math.round(s[0] ?? 0),
      rssMbMax: Math.round(Math.max(0, ...s)),
      rssMbEnd: Math.round(s.at(-1) ?? 0),
      ...(SOAK ? { growthPercent: Number((growth * 100).toFixed(1)) } : {}),
    };
    if (SOAK && growth > MAX_GROWTH) {
      console.log(`MISSED: ${app}-api memory grew over the soak`);
      failed = true;
    }
  }
  writeBenchResult(
    new URL(`./results/${SOAK ? 'soak' : 'load'}.json`, import.meta.url).pathname,
    { passed: !failed, services: rows, memory, firstFailures },
    { clients: CLIENTS, seconds: SECONDS, soak: SOAK, ...(SOAK ? { maxGrowth: MAX_GROWTH } : {}) },
  );
  if (failed) fail('errors or memory growth under load (above)');
  console.log('met: 0 errors under load');
}

await runBenchScript('load', main, async () => {
  await stopProcesses(children);
  await sleep(200);
  for (const { admin, name } of databases) await sqlQuery(admin, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
});
