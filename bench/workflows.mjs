#!/usr/bin/env node
// Workflows benchmark, run after a build: `node bench/workflows.mjs` (`npm run bench:workflows` builds first).
//
// The mail-api's compiled HTTP entry (`apps/mail-api/dist/main.js`) and worker (`dist/worker.js`) run as
// child processes against a fresh database `mail_bench_workflows` (migrated by the app's `migrate`
// command) and the local Redis under a private queue prefix. One project (bootstrap keys made for the run).
//
// a. Cost of triggering on POST /v1/track: req/s (autocannon, BENCH_CONNECTIONS connections,
//    BENCH_DURATION s after a 2 s warm-up, a new contact per request) of an event name no workflow
//    listens to ("none") against one that starts 5 enabled workflows ("five": 5 executions and their
//    first step jobs per request), BENCH_ROUNDS rounds in the same run (order alternating); medians, and
//    the median of the rounds' own ratios (goal >= 0.8). Runs after (b), with no worker: it measures what the API side pays (the
//    executions are created by the worker from one trigger job per batch); it checks that the queued
//    trigger jobs hold exactly the "five" events.
// b. Starts: BENCH_WORKFLOW_EVENTS (10,000) tracked events (new contacts), each starting one execution
//    of a workflow CONDITION (data.plan equals pro) -> UPDATE_CONTACT / EXIT, with one worker process
//    running: executions started per second (first to last `started_at`), every execution started
//    exactly once, executions finished per second (first start to last completion), and /v1/track's
//    req/s meanwhile against the same load on an event no workflow listens to (worker idle).
//
// Knobs: BENCH_DURATION (10), BENCH_CONNECTIONS (50), BENCH_ROUNDS (4), BENCH_WORKFLOW_EVENTS (10000),
// MAIL_DATABASE_URL (server), REDIS_URL. Always stops the processes, drops the database and deletes the
// bench's Redis keys. Writes bench/results/workflows.json.
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import {
  REPO_ROOT,
  entryPoint,
  missingEntryPoints,
  runMigrate,
  spawnNode,
  startHttpApp,
  stopProcesses,
  withDatabase,
} from '../scripts/lib/apps.mjs';
import { deleteRedisKeys, dropDatabase, withSqlClient } from '../scripts/lib/databases.mjs';
import { freePort, sleep, waitUntil } from '../scripts/lib/probes.mjs';
import { writeBenchResult } from './lib/results.mjs';
import { fail, runBenchScript } from './lib/run-script.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const EVENTS = Number(process.env.BENCH_WORKFLOW_EVENTS ?? 10_000);
const GOAL = 0.8;
const DATABASE = 'mail_bench_workflows';
const QUEUE_PREFIX = `bench-workflows-${randomBytes(4).toString('hex')}`;
const RESULTS_FILE = path.join(REPO_ROOT, 'bench', 'results', 'workflows.json');

const baseUrl = process.env.MAIL_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/mail';
const databaseUrl = withDatabase(baseUrl, DATABASE);
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keys = { secretKey: `sk_${randomBytes(24).toString('hex')}`, publicKey: `pk_${randomBytes(24).toString('hex')}` };
const children = [];
// One key for the whole run: the API seals webhook secrets with it, the worker opens them.
const SECRETS_KEY = randomBytes(32).toString('hex');

const withClient = withSqlClient;
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : Math.round((sorted[mid - 1] + sorted[mid]) / 2);
}

function appEnv(port) {
  return {
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    MAIL_PORT: String(port),
    MAIL_DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX,
    MAIL_LINK_SECRET: randomBytes(32).toString('hex'),
    MAIL_SECRETS_KEY: SECRETS_KEY,
    MAIL_RATE_LIMIT_PER_MINUTE: '100000000',
    MAIL_PUBLIC_RATE_LIMIT_PER_IP_PER_MINUTE: '100000000',
    MAIL_BOOTSTRAP_SECRET_KEY: keys.secretKey,
    MAIL_BOOTSTRAP_PUBLIC_KEY: keys.publicKey,
  };
}
async function prepareDatabase() {
  await dropDatabase(databaseUrl);
  await runMigrate(
    'mail',
    { ...process.env, MAIL_DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    { label: 'mail-migrate', track: children },
  );
}

async function startApi() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const script = entryPoint('mail', 'api');
  await startHttpApp({ label: 'mail-api', script, env: appEnv(port), url, readyPath: '/readyz', timeoutMs: 30_000, track: children });
  return url;
}

async function api(url, method, route, body) {
  const res = await fetch(`${url}${route}`, {
    method,
    headers: { authorization: `Bearer ${keys.secretKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) fail(`${method} ${route} answered ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** autocannon on POST /v1/track with a new contact per request; `amount` instead of a duration when given. */
async function track(url, event, { duration = DURATION, amount } = {}) {
  const body = (id) => JSON.stringify({ email: `c${id}@bench.example`, event, data: { plan: 'pro' } });
  const load = {
    url: `${url}/v1/track`,
    method: 'POST',
    connections: CONNECTIONS,
    headers: { authorization: `Bearer ${keys.secretKey}`, 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => ({ ...req, body: body(randomBytes(10).toString('hex')) }) }],
    ...(amount ? { amount } : { duration }),
  };
  const result = await autocannon(load);
  if (result.non2xx || result.errors) fail(`/v1/track (${event}): ${result.non2xx} non-2xx, ${result.errors} errors`);
  return {
    reqPerSec: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    total: result.requests.total,
  };
}

async function triggerCost(url) {
  const delay = { id: 'hold', type: 'DELAY', config: { amount: 1, unit: 'days' } };
  for (let i = 1; i <= 5; i += 1) {
    await api(url, 'POST', '/workflows', { name: `five ${i}`, eventName: 'bench-five', enabled: true, allowReentry: true, steps: [delay] });
  }
  const runs = { none: [], five: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    // Alternated order: the second run of a round meets bigger tables, which must not count against one kind.
    for (const kind of round % 2 === 0 ? ['none', 'five'] : ['five', 'none']) {
      await track(url, `bench-${kind}`, { duration: 2 }); // warm-up
      runs[kind].push(await track(url, `bench-${kind}`));
      console.log(`round ${round + 1} ${kind}: ${runs[kind].at(-1).reqPerSec} req/s`);
    }
  }
  const queued = await queuedTriggerEvents();
  const fiveEvents = await withClient(databaseUrl, async (c) =>
    (await c.query(`SELECT id FROM events WHERE name = 'bench-five'`)).rows.map((r) => r.id),
  );
  if (queued.size !== fiveEvents.length || fiveEvents.some((id) => !queued.has(id))) {
    fail(`(a) trigger jobs hold ${queued.size} events, not the ${fiveEvents.length} bench-five events`);
  }
  const none = median(runs.none.map((r) => r.reqPerSec));
  const five = median(runs.five.map((r) => r.reqPerSec));
  // The machine's load drifts between rounds: each round's own ratio, then their median.
  const ratios = runs.five.map((r, i) => Math.round((r.reqPerSec / runs.none[i].reqPerSec) * 100) / 100);
  return { none, five, ratio: median(ratios.map((x) => x * 100)) / 100, ratios, runs, triggerEventsQueued: queued.size };
}

/** The event ids of every waiting trigger job (no worker runs during (a): they stay queued). */
async function queuedTriggerEvents() {
  await sleep(1000); // the last batches add their trigger job just after answering
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('mail-workflow', { connection, prefix: QUEUE_PREFIX });
  const ids = new Set();
  try {
    for (let start = 0; ; start += 1000) {
      const jobs = await queue.getJobs(['wait', 'prioritized'], start, start + 999);
      for (const job of jobs) if (job?.name === 'workflow.trigger') for (const id of job.data.eventIds) ids.add(id);
      if (jobs.length < 1000) break;
    }
  } finally {
    await queue.close();
    connection.disconnect();
  }
  return ids;
}

async function startsAndRuns(url) {
  const workflow = await api(url, 'POST', '/workflows', {
    name: 'bench start',
    eventName: 'bench-start',
    enabled: true,
    steps: [
      { id: 'check', type: 'CONDITION', config: { field: 'data.plan', operator: 'equals', value: 'pro' }, onTrue: 'tag', onFalse: 'out' },
      { id: 'tag', type: 'UPDATE_CONTACT', config: { data: { tier: 'gold' } } },
      { id: 'out', type: 'EXIT', config: {} },
    ],
  });
  const worker = spawnNode('mail-worker', entryPoint('mail', 'worker'), appEnv(0));
  children.push(worker);
  await sleep(3000);
  // The same load on an event no workflow listens to, the worker idle: the baseline of (b)'s req/s.
  const idle = await track(url, 'bench-none', { amount: EVENTS });
  const wall = Date.now();
  const load = await track(url, 'bench-start', { amount: EVENTS });
  const wallSeconds = (Date.now() - wall) / 1000;
  const count = (sql) => withClient(databaseUrl, async (c) => (await c.query(sql, [workflow.id])).rows[0]);
  const finished = await waitUntil(
    async () =>
      Number((await count(`SELECT count(*) FROM workflow_executions WHERE workflow_id = $1 AND status = 'COMPLETED'`)).count) >= EVENTS,
    300_000,
    250,
  );
  if (!finished) fail(`(b) not every execution completed within 300 s`);
  const row = await count(
    `SELECT count(*)::int AS executions, count(DISTINCT contact_id)::int AS contacts,
            extract(epoch FROM max(started_at) - min(started_at)) AS start_span,
            extract(epoch FROM max(completed_at) - min(started_at)) AS run_span
       FROM workflow_executions WHERE workflow_id = $1`,
  );
  if (row.executions !== EVENTS || row.contacts !== EVENTS)
    fail(`(b) ${row.executions} executions for ${row.contacts} contacts, not ${EVENTS}`);
  await stopProcesses([worker]);
  return {
    events: EVENTS,
    trackReqPerSec: load.reqPerSec,
    trackReqPerSecNoWorkflow: idle.reqPerSec,
    startedPerSec: Math.round(EVENTS / Math.max(Number(row.start_span), wallSeconds / 10)),
    finishedPerSec: Math.round(EVENTS / Number(row.run_span)),
    trackWallSeconds: Math.round(wallSeconds * 10) / 10,
  };
}

async function cleanup() {
  await stopProcesses(children, 15_000);
  await dropDatabase(databaseUrl).catch(() => undefined);
  await deleteRedisKeys(redisUrl, QUEUE_PREFIX);
}

async function main() {
  const missing = missingEntryPoints(['mail'], ['api', 'worker', 'migrate']);
  if (missing.length) fail(`not built: ${missing.join(', ')} (run npm run build)`);
  await prepareDatabase();
  const url = await startApi();
  // (b) first, on an idle worker; (a) after it, with no worker (its executions only wait in the queue).
  const starts = await startsAndRuns(url);
  const cost = await triggerCost(url);
  console.log(`\n| POST /v1/track (req/s, median of ${ROUNDS}) | none | 5 workflows | ratio |`);
  console.log(`| --- | ---: | ---: | ---: |`);
  console.log(`| new contact, ${CONNECTIONS} connections, ${DURATION} s | ${cost.none} | ${cost.five} | ${cost.ratio} |`);
  console.log(`ratio per round (five / none): ${cost.ratios.join(', ')}; the ratio above is their median`);
  console.log(
    `\n(b) ${starts.events} events, each starting an execution, 1 worker on the same machine: ${starts.startedPerSec} executions ` +
      `started/s, ${starts.finishedPerSec} finished/s; /v1/track ${starts.trackReqPerSec} req/s (${starts.trackReqPerSecNoWorkflow} ` +
      `for an event no workflow listens to, worker idle)`,
  );
  console.log(`bench: /v1/track with 5 workflows / none = ${cost.ratio} (goal >= ${GOAL}: ${cost.ratio >= GOAL ? 'met' : 'MISSED'})`);
  writeBenchResult(RESULTS_FILE, { cost, starts }, { durationSeconds: DURATION, connections: CONNECTIONS, rounds: ROUNDS });
}

await runBenchScript('bench:workflows', main, cleanup);
