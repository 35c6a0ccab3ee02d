#!/usr/bin/env node
// Fair sending between projects (decisions.md "Fair sending and run-time rate", issue #30), run after a
// build: `node bench/fair-sending.mjs` (`npm run bench:delivery` builds, runs mail-delivery.mjs, then this).
//
// BENCH_WORKERS (default 2) compiled mail workers (`apps/mail-api/dist/worker.js`) at the default
// MAIL_RATE_PER_SECOND=14, against a fresh database `mail_bench_fair` (migrated by the app's own
// command) and an SMTP sink in this process that timestamps each message and reads its recipient's
// domain (one domain per project). Campaign emails are inserted directly in SQL as the campaign
// pipeline leaves them (QUEUED, not fed, with a campaign): the workers' MarketingFeeder moves them onto
// the queue. Transactional emails are inserted and enqueued at priority 1 as /v1/send does.
//
// a. Ten projects, 1,000 campaign emails each, all waiting at once: over the first minute from the
//    first message, the fastest project's rate / the slowest's (target <= 1.2), and the overall rate
//    (target 14/s +- 2%).
// b. Project A's campaign of 2,800, project B's of 140 a second later, and project C's transactional
//    email every 1.5 s meanwhile: B's last email within 25 s of its start (target), C's each within
//    2 s (target). A's remaining backlog is not waited for (200 s at 14/s).
//
// Always stops the workers, drops the database and deletes the bench's Redis keys.
// Writes bench/results/fair-sending.json (bench/lib/results.mjs: commit, machine, load average).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { REPO_ROOT, entryPoint, missingEntryPoints, runMigrate, spawnNode, stopProcesses, withDatabase } from '../scripts/lib/apps.mjs';
import { deleteRedisKeys, dropDatabase, withSqlClient } from '../scripts/lib/databases.mjs';
import { redactUrl, redisPing, sleep, tcpAccepts } from '../scripts/lib/probes.mjs';
import { startCountingSink } from './lib/counting-smtp-sink.mjs';
import { writeBenchResult } from './lib/results.mjs';
import { fail, runBenchScript } from './lib/run-script.mjs';

const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const RATE = 14;
const PROJECTS = 10;
const PER_PROJECT = 1000;
const A_SIZE = 2800;
const B_SIZE = 140;
const QUEUE_PREFIX = 'bench-fair';
const DOMAIN = 'bench.example.com';
const DB_NAME = 'mail_bench_fair';
const RESULTS_FILE = path.join(REPO_ROOT, 'bench', 'results', 'fair-sending.json');
const DIST = path.join(REPO_ROOT, 'apps', 'mail-api', 'dist');
const SECRETS_KEY = randomBytes(32).toString('hex');

const baseUrl = process.env.MAIL_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/mail';
const databaseUrl = withDatabase(baseUrl, DB_NAME);
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const children = [];
let sink;

const withClient = withSqlClient;
const verdict = (met) => (met ? 'met' : 'MISSED');

async function prepareDatabase() {
  await dropDatabase(databaseUrl);
  await runMigrate(
    'mail',
    { ...process.env, MAIL_DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    { label: 'mail-migrate', track: children },
  );
}

/** A project with a VERIFIED domain (DKIM key) and, unless `campaign` is false, a SENDING campaign. */
async function project(name, { campaign = true } = {}) {
  const { generateKeyPairSync } = await import('node:crypto');
  const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return withClient(databaseUrl, async (c) => {
    const hash = () => randomBytes(32).toString('hex');
    const [{ id }] = (
      await c.query(
        `INSERT INTO projects (name, secret_key_hash, public_key_hash, secret_key_prefix) VALUES ($1, $2, $3, 'sk_bench') RETURNING id`,
        [name, hash(), hash()],
      )
    ).rows;
    await c.query(
      `INSERT INTO domains (project_id, domain, status, verification_token, dkim_selector, dkim_private_key, dkim_public_key, verified_at)
       VALUES ($1, $2, 'VERIFIED', $3, 'bench', $4, 'unused', now())`,
      [id, DOMAIN, hash(), pem],
    );
    const campaignId = campaign
      ? (
          await c.query(
            `INSERT INTO campaigns (project_id, name, subject, body, from_email, audience_type, status)
             VALUES ($1, $2, 'News', '<p>News</p>', $3, 'ALL', 'SENDING') RETURNING id`,
            [id, name, `news@${DOMAIN}`],
          )
        ).rows[0].id
      : null;
    return { id, name, campaignId, domain: `${name.toLowerCase()}.example.net` };
  });
}

/** `count` campaign emails of `p` waiting for the feeder, as the campaign pipeline leaves them. */
async function campaignEmails(p, count) {
  await withClient(databaseUrl, (c) =>
    c.query(
      `INSERT INTO emails (project_id, campaign_id, to_email, from_email, subject, html)
       SELECT $1, $2, 'r' || g || '@' || $3, $4, 'News ' || g, '<p>News</p>' FROM generate_series(1, $5::int) AS g`,
      [p.id, p.campaignId, p.domain, `news@${DOMAIN}`, count],
    ),
  );
  return Date.now();
}

/** One transactional email of `p`, inserted and enqueued at priority 1 (as /v1/send does). */
async function transactional(p, queue, emailJobOptions, i) {
  const to = `urgent${i}@${p.domain}`;
  const sentAt = Date.now();
  const [{ id }] = await withClient(
    databaseUrl,
    async (c) =>
      (
        await c.query(
          `INSERT INTO emails (project_id, to_email, from_email, subject, html) VALUES ($1, $2, $3, 'Code', '<p>1</p>') RETURNING id`,
          [p.id, to, `alerts@${DOMAIN}`],
        )
      ).rows,
  );
  await queue.add('email.deliver', { emailId: id, projectId: p.id }, emailJobOptions({ id, projectId: p.id, priority: 1 }));
  return { to, sentAt };
}

function startWorkers() {
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    MAIL_DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX,
    MAIL_LINK_SECRET: randomBytes(32).toString('hex'),
    MAIL_SECRETS_KEY: SECRETS_KEY,
    MAIL_SMTP_URL: sink.url,
    MAIL_RATE_PER_SECOND: String(RATE),
    MAIL_TRACKING: 'false',
    // Several workers on one machine: each its own free port for /metrics (the default 9465 fits one).
    MAIL_WORKER_METRICS_PORT: '0',
  };
  const started = Array.from({ length: WORKERS }, (_, i) => spawnNode(`mail-worker-${i + 1}`, entryPoint('mail', 'worker'), env));
  children.push(...started);
  return started;
}

async function waitUntil(predicate, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** a: ten projects at once, their rates over the first minute. */
async function tenProjects() {
  const projects = [];
  for (let i = 0; i < PROJECTS; i++) projects.push(await project(`P${i}`));
  for (const p of projects) await campaignEmails(p, PER_PROJECT);
  // The figures count from the first message; workers booting on a loaded machine may take minutes.
  await waitUntil(() => sink.received.length > 0, 300_000, 'the first message');
  const first = sink.received[0].at;
  await waitUntil(() => Date.now() >= first + 60_000, 70_000, 'a minute of sending');
  const minute = sink.received.filter((m) => m.at < first + 60_000);
  const perProject = projects.map((p) => minute.filter((m) => m.domain === p.domain).length);
  const ratio = Number((Math.max(...perProject) / Math.min(...perProject)).toFixed(3));
  const overall = Number((minute.length / 60).toFixed(2));
  return {
    projects: PROJECTS,
    emailsPerProject: PER_PROJECT,
    firstMinutePerProject: perProject,
    fastestToSlowest: ratio,
    overallPerSecond: overall,
  };
}

/** b: A's 2,800, B's 140 a second later, C's transactional mail meanwhile. */
async function lateComer() {
  // Empty the queue of scenario a: its projects' campaigns are cancelled (their rows no longer fed).
  await withClient(databaseUrl, (c) => c.query(`UPDATE emails SET status = 'CANCELLED' WHERE status = 'QUEUED' AND fed_at IS NULL`));
  await sleep(3000);
  const [a, b, c] = [await project('A'), await project('B'), await project('C', { campaign: false })];
  const { emailJobOptions } = await import(pathToFileURL(path.join(DIST, 'modules/delivery/email-delivery.queue.js')).href);
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('mail-email', { connection, prefix: QUEUE_PREFIX });
  try {
    await campaignEmails(a, A_SIZE);
    await sleep(1000);
    const bStart = await campaignEmails(b, B_SIZE);
    const sent = [];
    const ofB = () => sink.received.filter((m) => m.domain === b.domain);
    for (let i = 0; ofB().length < B_SIZE; i++) {
      if (Date.now() > bStart + 120_000) fail(`B got ${ofB().length} of ${B_SIZE} within 120 s`);
      sent.push(await transactional(c, queue, emailJobOptions, i));
      await sleep(1500);
    }
    const bLastSeconds = Number(((Math.max(...ofB().map((m) => m.at)) - bStart) / 1000).toFixed(2));
    const bFirstAt = Math.min(...ofB().map((m) => m.at));
    await waitUntil(() => sent.every((s) => sink.received.some((m) => m.to === s.to)), 30_000, "C's transactional emails");
    const latencies = sent.map((s) => sink.received.find((m) => m.to === s.to).at - s.sentAt);
    return {
      aEmails: A_SIZE,
      bEmails: B_SIZE,
      bLastEmailAfterStartSeconds: bLastSeconds,
      bFirstEmailAfterStartSeconds: Number(((bFirstAt - bStart) / 1000).toFixed(2)),
      // A's emails between B's emails being written and B's first: about one backlog (1.5 s of the rate).
      aBeforeBFirst: sink.received.filter((m) => m.domain === a.domain && m.at >= bStart && m.at < bFirstAt).length,
      aSentMeanwhile: sink.received.filter((m) => m.domain === a.domain).length,
      transactional: {
        count: latencies.length,
        maxMs: Math.max(...latencies),
        meanMs: Math.round(latencies.reduce((x, y) => x + y, 0) / latencies.length),
      },
    };
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

async function main() {
  const missing = missingEntryPoints(['mail'], ['worker', 'migrate']);
  if (missing.length) fail(`Not built: ${missing.join(', ')} (run npm run build)`);
  const pgUrl = new URL(baseUrl);
  if (!(await tcpAccepts(pgUrl.hostname, Number(pgUrl.port || 5432)))) fail(`Postgres is not reachable at ${redactUrl(pgUrl)}`);
  await redisPing(redisUrl).catch((err) => fail(`Redis does not answer at ${redactUrl(redisUrl)} (${err.message})`));
  await deleteRedisKeys(redisUrl, QUEUE_PREFIX);
  sink = await startCountingSink();
  await prepareDatabase();
  startWorkers();
  console.log(`bench: fair sending, ${WORKERS} worker processes at ${RATE}/s`);

  const misses = [];
  const a = await tenProjects();
  const fair = a.fastestToSlowest <= 1.2;
  const overallMet = Math.abs(a.overallPerSecond - RATE) <= RATE * 0.02;
  if (!fair) misses.push('fastest / slowest <= 1.2');
  if (!overallMet) misses.push('overall 14/s +- 2%');
  console.log(
    `bench: ${PROJECTS} projects, first minute: ${a.firstMinutePerProject.join(' ')} emails; fastest / slowest ${a.fastestToSlowest} ` +
      `(target <= 1.2: ${verdict(fair)}); overall ${a.overallPerSecond}/s (target 14 +- 2%: ${verdict(overallMet)})`,
  );
  const b = await lateComer();
  const bMet = b.bLastEmailAfterStartSeconds <= 25;
  const cMet = b.transactional.maxMs <= 2000;
  if (!bMet) misses.push("B's last within 25 s");
  if (!cMet) misses.push('transactional within 2 s');
  console.log(
    `bench: A ${A_SIZE} + B ${B_SIZE} a second later: B's first after ${b.bFirstEmailAfterStartSeconds} s (${b.aBeforeBFirst} of A's before it), ` +
      `B's last after ${b.bLastEmailAfterStartSeconds} s (target <= 25: ${verdict(bMet)}), ` +
      `A sent ${b.aSentMeanwhile} meanwhile; C's ${b.transactional.count} transactional: max ${b.transactional.maxMs} ms, ` +
      `mean ${b.transactional.meanMs} ms (target <= 2000: ${verdict(cMet)})`,
  );
  console.log(misses.length ? `bench: MISSED: ${misses.join(', ')}` : 'bench: every target met');
  writeBenchResult(RESULTS_FILE, { tenProjects: a, lateComer: b, missed: misses }, { workers: WORKERS, ratePerSecond: RATE });
  console.log(`written: ${path.relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE}`);
}

let cleaning;
function cleanup() {
  cleaning ??= (async () => {
    await stopProcesses(children, 10_000);
    await sink?.close();
    await dropDatabase(databaseUrl).catch((err) => console.error(`could not drop ${DB_NAME}: ${err.message}`));
    await deleteRedisKeys(redisUrl, QUEUE_PREFIX).catch((err) =>
      console.error(`could not delete Redis keys ${QUEUE_PREFIX}:*: ${err.message}`),
    );
  })();
  return cleaning;
}

await runBenchScript('bench:fair-sending', main, cleanup);
