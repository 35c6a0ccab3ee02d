#!/usr/bin/env node
// Campaign planning benchmark, run after a build: `node bench/campaign/planning.mjs` (bench/campaign.mjs
// runs it). Planning = POST /campaigns/{id}/send until its dispatch job has taken the audience snapshot
// (one INSERT ... SELECT into campaign_recipients) and enqueued every batch job.
//
// A fresh database `mail_bench_campaign_planning` (migrated by the app's `migrate` command), the compiled
// API and ONE worker process (production settings, default MAIL_RATE_PER_SECOND), a counting SMTP sink.
// For each size of BENCH_CAMPAIGN_SIZES (default 100000,1000000) the project's subscribed contacts are
// topped up to that size (set-based), a campaign to ALL of them is sent, and timed: planning (request to
// the dispatch job's completion), the dispatch job alone (BullMQ's processedOn to finishedOn), and as the
// same-run baseline a bare `INSERT ... SELECT` copy of the same audience into campaign_recipients. The
// worker's peak RSS is sampled (every 100 ms) from the request until 5 s after planning, while its first
// batches render and insert emails. Targets: 100k under 5 s; 1M under 60 s with the worker under 300 MB.
// Each campaign is cancelled afterwards.
//
// Knobs: BENCH_CAMPAIGN_SIZES, MAIL_DATABASE_URL (server), REDIS_URL. Always drops the database and the
// bench's Redis keys. Writes bench/results/campaign-planning.json (BENCH_RESULTS_FILE: another path).
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { REPO_ROOT } from '../../scripts/lib/apps.mjs';
import { sleep } from '../../scripts/lib/probes.mjs';
import { writeBenchResult } from '../lib/results.mjs';
import { fail, runBenchScript } from '../lib/run-script.mjs';
import { benchEnvironment, DOMAIN, redisUrl, rssMb, sampleRss, verdict, withClient } from './lib.mjs';

const SIZES = (process.env.BENCH_CAMPAIGN_SIZES ?? '100000,1000000')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0)
  .sort((a, b) => a - b);
const TARGET_MS = { 100000: 5_000, 1000000: 60_000 };
const RSS_TARGET_MB = 300;
const RESULTS_FILE = path.resolve(process.env.BENCH_RESULTS_FILE ?? path.join(REPO_ROOT, 'bench', 'results', 'campaign-planning.json'));

const bench = benchEnvironment('campaign_planning');

/** The dispatch job of a campaign sent now, once finished: its finish time and result. */
async function dispatchFinished(campaignId, timeoutMs) {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('mail-campaigns', { connection, prefix: bench.queuePrefix });
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const job = await queue.getJob(`campaign:${campaignId}:dispatch-now`);
      if (job?.failedReason) fail(`the dispatch job failed: ${job.failedReason}`);
      if (job?.finishedOn) return { processedOn: job.processedOn, finishedOn: job.finishedOn, result: job.returnvalue };
      if (Date.now() > deadline) fail(`the dispatch job did not finish within ${timeoutMs / 1000} s`);
      await sleep(50);
    }
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

/**
 * The same-run baseline (issue #34): a bare copy of the same audience into the recipients table, the
 * least a snapshot must write (the same rows, numbered, with the table's indexes and constraints), for
 * a DRAFT campaign of its own, inside a transaction that is rolled back afterwards (not timed).
 */
async function baselineMs(projectId) {
  const draft = await bench.api('POST', '/campaigns', {
    name: 'Planning baseline',
    subject: 'Baseline',
    body: '<p>Baseline</p>',
    from: `news@${DOMAIN}`,
    audienceType: 'ALL',
  });
  return withClient(bench.databaseUrl, async (c) => {
    await c.query('BEGIN');
    try {
      const started = process.hrtime.bigint();
      await c.query(
        `INSERT INTO campaign_recipients (project_id, campaign_id, seq, contact_id)
         SELECT $1, $2, row_number() OVER (ORDER BY c.id), c.id FROM contacts c WHERE c.project_id = $1 AND c.subscribed`,
        [projectId, draft.data.id],
      );
      return Number(process.hrtime.bigint() - started) / 1e6;
    } finally {
      await c.query('ROLLBACK');
    }
  });
}

async function planOne(projectId, worker, size) {
  const created = await bench.api('POST', '/campaigns', {
    name: `Planning ${size}`,
    subject: 'Hello {{firstName}}',
    body: '<p>Hi {{firstName}}, news for {{plan}} members. <a href="https://shop.example/">Shop</a></p>',
    from: `news@${DOMAIN}`,
    audienceType: 'ALL',
  });
  const campaignId = created.data.id;
  const idleRssMb = Math.round(rssMb(worker.child.pid) ?? 0);
  const stopSampling = sampleRss([worker.child.pid]);
  const started = Date.now();
  await bench.api('POST', `/campaigns/${campaignId}/send`, {});
  const dispatch = await dispatchFinished(campaignId, 300_000);
  const planningMs = dispatch.finishedOn - started;
  await sleep(5000);
  const peakRssMb = Math.round((await stopSampling())[worker.child.pid]);
  const row = await withClient(
    bench.databaseUrl,
    async (c) =>
      (
        await c.query(
          `SELECT total_recipients, batch_count, planned_batches,
                (SELECT count(*)::int FROM emails WHERE campaign_id = $1) AS emails
           FROM campaigns WHERE id = $1`,
          [campaignId],
        )
      ).rows[0],
  );
  await bench.api('POST', `/campaigns/${campaignId}/cancel`, {});
  const baseline = await baselineMs(projectId);
  return {
    contacts: size,
    recipients: row.total_recipients,
    batches: row.batch_count,
    plannedBatchesAfter5s: row.planned_batches,
    emailsAfter5s: row.emails,
    planningMs,
    // The dispatch job itself (lock, SENDING, snapshot, batch jobs), without its wait in the queue.
    dispatchJobMs: dispatch.finishedOn - dispatch.processedOn,
    baselineCopyMs: Math.round(baseline),
    dispatchToBaseline: Number(((dispatch.finishedOn - dispatch.processedOn) / baseline).toFixed(2)),
    planningToBaseline: Number((planningMs / baseline).toFixed(2)),
    workerIdleRssMb: idleRssMb,
    workerPeakRssMb: peakRssMb,
    dispatch: dispatch.result,
  };
}

async function main() {
  if (SIZES.length === 0) fail('BENCH_CAMPAIGN_SIZES lists no size');
  await bench.checkPrerequisites();
  await bench.startSink();
  await bench.prepareDatabase();
  const projectId = await bench.startApi();
  await bench.insertDomain(projectId);
  const [worker] = await bench.startWorkers(1);
  const results = [];
  const misses = [];
  let seeded = 0;
  for (const size of SIZES) {
    const seedStarted = Date.now();
    await bench.seedContacts(projectId, seeded + 1, size);
    seeded = size;
    console.log(`bench: seeded ${size} contacts in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);
    const result = await planOne(projectId, worker, size);
    results.push(result);
    const target = TARGET_MS[size];
    const inTime = target === undefined || result.planningMs < target;
    const rssOk = size < 1_000_000 || result.workerPeakRssMb < RSS_TARGET_MB;
    if (!inTime) misses.push(`planning ${size}`);
    if (!rssOk) misses.push(`worker RSS ${size}`);
    if (result.recipients !== size) misses.push(`recipients ${size}`);
    console.log(
      `bench: planning ${size} recipients: ${(result.planningMs / 1000).toFixed(2)} s` +
        (target ? ` (target < ${target / 1000} s: ${verdict(inTime)})` : '') +
        `; dispatch job ${(result.dispatchJobMs / 1000).toFixed(2)} s = ${result.dispatchToBaseline}x a bare copy of the audience ` +
        `(${(result.baselineCopyMs / 1000).toFixed(2)} s); ${result.batches} batch jobs; worker RSS ${result.workerIdleRssMb} MB idle, ` +
        `peak ${result.workerPeakRssMb} MB` +
        (size >= 1_000_000 ? ` (target < ${RSS_TARGET_MB}: ${verdict(rssOk)})` : '') +
        `; after 5 s: ${result.plannedBatchesAfter5s} batches planned, ${result.emailsAfter5s} emails`,
    );
  }
  console.log(misses.length ? `bench: MISSED: ${misses.join(', ')}` : 'bench: every planning target met');
  writeBenchResult(RESULTS_FILE, { results, missed: misses }, { sizes: SIZES });
  console.log(`written: ${path.relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE}`);
}

await runBenchScript('bench:campaign planning', main, bench.cleanup);
