#!/usr/bin/env node
// Campaign delivery benchmark, run after a build: `node bench/campaign/delivery.mjs` (bench/campaign.mjs
// runs it). The compiled API and BENCH_WORKERS worker processes (default 2) against a fresh database
// `mail_bench_campaign_delivery` and a counting SMTP sink in this process.
//
// a. Rate: default MAIL_RATE_PER_SECOND (14). A campaign to 2,000 contacts is sent while a transactional
//    email goes through POST /v1/send every 2 s. After 5 s of warm-up, everything the sink receives in
//    60 s is counted: target within 2% of 14/s, the deployment-wide limit holding for campaign and
//    transactional mail together; and each transactional email's time from request to sink (it
//    overtakes the campaign's queue). Same-run baseline: the same window over a backlog of transactional
//    mail alone (1,000 emails through POST /v1/send), which shows what the limiter itself reaches here
//    (its ceiling is two emails per 143 ms slot: 13.99/s; see sendingLimiter).
// b. Throughput with the rate lifted (MAIL_RATE_PER_SECOND=10000, BENCH_SEND_CONCURRENCY 64 and
//    BENCH_SMTP_POOL_SIZE 8 per worker): BENCH_CAMPAIGN_EMAILS (default 5000) transactional emails through
//    POST /v1/send (50 recipients a request) as the same-run baseline, then a campaign to as many
//    contacts (open and click tracking on, the default): emails/s from first to last receipt of each,
//    and their ratio (goal >= 0.85).
//
// Knobs: BENCH_WORKERS, BENCH_CAMPAIGN_EMAILS, BENCH_SEND_CONCURRENCY, BENCH_SMTP_POOL_SIZE,
// BENCH_SKIP_RATE=1 (only b), MAIL_DATABASE_URL (server), REDIS_URL. Always stops the processes, drops
// the database and deletes the bench's Redis keys. Writes bench/results/campaign-delivery.json.
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/apps.mjs';
import { sleep } from '../../scripts/lib/probes.mjs';
import { writeBenchResult } from '../lib/results.mjs';
import { fail, runBenchScript } from '../lib/run-script.mjs';
import { benchEnvironment, DOMAIN, verdict, withClient } from './lib.mjs';

const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const EMAILS = Number(process.env.BENCH_CAMPAIGN_EMAILS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_SEND_CONCURRENCY ?? 64);
const POOL_SIZE = Number(process.env.BENCH_SMTP_POOL_SIZE ?? 8);
const DEFAULT_RATE = 14;
const WINDOW_MS = 60_000;
const WARM_UP_MS = 5_000;
const RATE_CONTACTS = 2000;
const HTML =
  '<h1>Hello {{firstName}}</h1>' +
  `${'<p>Your weekly digest: three new articles, one event and a short survey.</p>'.repeat(20)}` +
  '<p><a href="https://shop.example/new">New this week</a> <a href="{{unsubscribeUrl}}">Unsubscribe</a></p>';
const RESULTS_FILE = path.join(REPO_ROOT, 'bench', 'results', 'campaign-delivery.json');

const bench = benchEnvironment('campaign_delivery');
let sink;

async function sendCampaign(name, emailDomain) {
  const created = await bench.api('POST', '/campaigns', {
    name,
    subject: 'News for {{firstName}}',
    body: HTML,
    from: `news@${DOMAIN}`,
    audienceType: 'FILTERED',
    audienceFilter: { logic: 'AND', groups: [{ filters: [{ field: 'email', operator: 'contains', value: `@${emailDomain}` }] }] },
  });
  await bench.api('POST', `/campaigns/${created.data.id}/send`, {});
  return created.data.id;
}

const transactional = (to) => ({ to, from: `alerts@${DOMAIN}`, subject: 'Your code', body: '<p>Your sign-in code is 123456.</p>' });

async function waitForReceipts(predicate, count, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const matching = sink.received.filter(predicate);
    if (matching.length >= count) return matching;
    if (Date.now() > deadline) fail(`the sink got ${matching.length} of ${count} messages within ${timeoutMs / 1000} s`);
    await sleep(20);
  }
}

/** Receipts in the 60 s window that starts 5 s after the first one. */
async function windowFrom(first) {
  const from = first.at + WARM_UP_MS;
  const to = from + WINDOW_MS;
  while (Date.now() < to + 1000) await sleep(200);
  return sink.received.filter((m) => m.at >= from && m.at < to);
}

/** Transactional mail alone at the default rate: what the limiter reaches on this machine now. */
async function rateBaseline() {
  const workers = await bench.startWorkers(WORKERS);
  sink.received.length = 0;
  const recipients = Array.from({ length: 1000 }, (_, i) => `base${i}@baseline.example`);
  for (let i = 0; i < recipients.length; i += 50) await bench.api('POST', '/v1/send', transactional(recipients.slice(i, i + 50)));
  const [first] = await waitForReceipts(() => true, 1, 60_000);
  const counted = await windowFrom(first);
  await bench.stop(workers);
  // What the window did not need must not be sent later (the requeue sweep would pick it up).
  await withClient(bench.databaseUrl, (c) =>
    c.query(`UPDATE emails SET status = 'FAILED', error = 'bench baseline leftover' WHERE status IN ('QUEUED', 'SENDING')`),
  );
  await bench.deleteQueueKeys();
  return Number((counted.length / (WINDOW_MS / 1000)).toFixed(2));
}

async function rateScenario(projectId) {
  const baselinePerSecond = await rateBaseline();
  await bench.seedContacts(projectId, 1, RATE_CONTACTS, 'rate.example');
  const workers = await bench.startWorkers(WORKERS);
  sink.received.length = 0;
  const campaignId = await sendCampaign('Rate', 'rate.example');
  const [first] = await waitForReceipts(() => true, 1, 60_000);
  const from = first.at + WARM_UP_MS;
  const to = from + WINDOW_MS;
  const requests = [];
  for (let i = 0; Date.now() < to; i++) {
    const address = `tx${i}@transactional.example`;
    requests.push({ address, at: Date.now() });
    await bench.api('POST', '/v1/send', transactional(address));
    await sleep(2000);
  }
  await sleep(3000);
  const counted = sink.received.filter((m) => m.at >= from && m.at < to);
  const latencies = requests
    .map((r) => (sink.received.find((m) => m.to === r.address)?.at ?? Number.POSITIVE_INFINITY) - r.at)
    .sort((a, b) => a - b);
  await bench.api('POST', `/campaigns/${campaignId}/cancel`, {});
  await bench.stop(workers);
  const rate = counted.length / (WINDOW_MS / 1000);
  return {
    rateSetting: DEFAULT_RATE,
    workers: WORKERS,
    windowSeconds: WINDOW_MS / 1000,
    received: counted.length,
    transactionalInWindow: counted.filter((m) => m.to.endsWith('@transactional.example')).length,
    emailsPerSecond: Number(rate.toFixed(2)),
    deviation: Number((Math.abs(rate - DEFAULT_RATE) / DEFAULT_RATE).toFixed(4)),
    transactionalOnlyPerSecond: baselinePerSecond,
    toBaseline: Number((rate / baselinePerSecond).toFixed(3)),
    transactionalLatencyMs: { median: latencies[Math.floor(latencies.length / 2)], max: latencies[latencies.length - 1] },
  };
}

const perSecond = (receipts) => {
  const times = receipts.map((m) => m.at).sort((a, b) => a - b);
  const seconds = (times[times.length - 1] - times[0]) / 1000;
  return { emails: receipts.length, seconds: Number(seconds.toFixed(2)), emailsPerSecond: Math.round((receipts.length - 1) / seconds) };
};

async function throughputScenario(projectId) {
  await bench.seedContacts(projectId, 1, EMAILS, 'throughput.example');
  const workers = await bench.startWorkers(WORKERS, {
    MAIL_RATE_PER_SECOND: '10000',
    MAIL_SEND_CONCURRENCY: String(CONCURRENCY),
    MAIL_SMTP_POOL_SIZE: String(POOL_SIZE),
  });
  // Warm-up: opens the SMTP pools and prepares the statements of both pipelines.
  await bench.api('POST', '/v1/send', { ...transactional(Array.from({ length: 50 }, (_, i) => `warm${i}@warm.example`)) });
  await waitForReceipts((m) => m.to.endsWith('@warm.example'), 50, 60_000);

  const recipients = Array.from({ length: EMAILS }, (_, i) => `t${i}@tx-throughput.example`);
  const requests = [];
  for (let i = 0; i < recipients.length; i += 50) requests.push(recipients.slice(i, i + 50));
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let k = next++; k < requests.length; k = next++) await bench.api('POST', '/v1/send', transactional(requests[k]));
    }),
  );
  const txReceipts = await waitForReceipts((m) => m.to.endsWith('@tx-throughput.example'), EMAILS, 300_000);

  const campaignId = await sendCampaign('Throughput', 'throughput.example');
  const campaignReceipts = await waitForReceipts((m) => m.to.endsWith('@throughput.example'), EMAILS, 300_000);
  let status = '';
  for (let i = 0; i < 100 && status !== 'SENT'; i++) {
    status = (await bench.api('GET', `/campaigns/${campaignId}`)).data.status;
    if (status !== 'SENT') await sleep(100);
  }
  const stats = (await bench.api('GET', `/campaigns/${campaignId}/stats`)).data;
  const events = await withClient(bench.databaseUrl, async (c) =>
    Number((await c.query(`SELECT count(*) FROM events WHERE project_id = $1 AND name = 'email.sent'`, [projectId])).rows[0].count),
  );
  await bench.stop(workers);
  const tx = perSecond(txReceipts);
  const campaign = { ...perSecond(campaignReceipts), status, delivered: stats.deliveredCount, sentEvents: events };
  return {
    workers: WORKERS,
    sendConcurrency: CONCURRENCY,
    smtpPoolSize: POOL_SIZE,
    transactional: tx,
    campaign,
    ratio: Number((campaign.emailsPerSecond / tx.emailsPerSecond).toFixed(2)),
  };
}

async function main() {
  await bench.checkPrerequisites();
  sink = await bench.startSink();
  await bench.prepareDatabase();
  const projectId = await bench.startApi();
  await bench.insertDomain(projectId);
  const misses = [];
  const rate = process.env.BENCH_SKIP_RATE ? null : await rateScenario(projectId);
  if (rate) {
    const met = rate.deviation <= 0.02;
    if (!met) misses.push('rate within 2%');
    console.log(
      `bench: rate ${DEFAULT_RATE}/s, ${WORKERS} workers, campaign + a transactional email every 2 s: ${rate.received} emails in ` +
        `${rate.windowSeconds} s = ${rate.emailsPerSecond}/s (target within 2% of ${DEFAULT_RATE}: ${verdict(met)}); transactional mail ` +
        `alone in the same run ${rate.transactionalOnlyPerSecond}/s (ratio ${rate.toBaseline}); transactional ` +
        `request to sink: median ${rate.transactionalLatencyMs.median} ms, max ${rate.transactionalLatencyMs.max} ms`,
    );
  }
  const throughput = await throughputScenario(projectId);
  const ratioMet = throughput.ratio >= 0.85;
  const complete = throughput.campaign.status === 'SENT' && throughput.campaign.delivered === EMAILS;
  if (!ratioMet) misses.push('campaign / transactional >= 0.85');
  if (!complete) misses.push('campaign SENT with every email delivered');
  console.log(
    `bench: rate lifted, ${WORKERS} workers: transactional ${throughput.transactional.emails} emails in ${throughput.transactional.seconds} s = ` +
      `${throughput.transactional.emailsPerSecond}/s; campaign ${throughput.campaign.emails} in ${throughput.campaign.seconds} s = ` +
      `${throughput.campaign.emailsPerSecond}/s, ${throughput.campaign.status}, ${throughput.campaign.delivered} delivered (${verdict(complete)}); ` +
      `campaign / transactional = ${throughput.ratio} (goal >= 0.85: ${verdict(ratioMet)})`,
  );
  console.log(misses.length ? `bench: MISSED: ${misses.join(', ')}` : 'bench: every delivery target met');
  writeBenchResult(RESULTS_FILE, { rate, throughput, missed: misses }, { emails: EMAILS, workers: WORKERS });
  console.log(`written: ${path.relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE}`);
}

await runBenchScript('bench:campaign delivery', main, bench.cleanup);
