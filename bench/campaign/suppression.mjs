#!/usr/bin/env node
// Suppression list benchmark (issue #28), run after a build: `node bench/campaign/suppression.mjs`
// (bench/campaign.mjs runs it as part `suppression`). The compiled API and BENCH_WORKERS worker processes
// (default 2) against a fresh database `mail_bench_campaign_suppression` and a counting SMTP sink.
//
// a. Cost of the suppression check: with the rate lifted (as campaign/delivery.mjs b), a campaign to
//    BENCH_SUPPRESSION_EMAILS (default 5000) contacts with an empty suppression list, then, in the same run,
//    a campaign to as many other contacts after 100,000 addresses (none of them in the audience) were
//    imported: emails/s from first to last receipt of each and their ratio (goal >= 0.95). The check is one
//    lookup on the (project_id, lower(email)) index inside the claim statement.
// b. CSV import: POST /suppressions/import of 1,000,000 rows (`email,reason`), streamed: time (goal < 30 s)
//    and the API process's peak RSS during it (goal < 300 MB).
//
// Knobs: BENCH_WORKERS, BENCH_SUPPRESSION_EMAILS, BENCH_SUPPRESSION_IMPORT_ONLY=1 (only b; keeps a's figures from
// the results file, with their own generatedAt), MAIL_DATABASE_URL (server), REDIS_URL. Writes
// bench/results/campaign-suppression.json.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sleep } from '../../scripts/lib/probes.mjs';
import { runContext, writeBenchResult } from '../lib/results.mjs';
import { fail, runBenchScript } from '../lib/run-script.mjs';
import { RESULTS_FILE, writeSuppressionTable } from './suppression-table.mjs';
import { benchEnvironment, DOMAIN, rssMb, sampleRss, verdict, withClient } from './lib.mjs';

const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const EMAILS = Number(process.env.BENCH_SUPPRESSION_EMAILS ?? 5000);
const SUPPRESSED = 100_000;
const IMPORT_ROWS = 1_000_000;
const HTML = `<h1>Hello {{firstName}}</h1>${'<p>Your weekly digest.</p>'.repeat(20)}<p><a href="{{unsubscribeUrl}}">Unsubscribe</a></p>`;

const bench = benchEnvironment('campaign_suppression');
let sink;

async function waitForReceipts(predicate, count, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const matching = sink.received.filter(predicate);
    if (matching.length >= count) return matching;
    if (Date.now() > deadline) fail(`the sink got ${matching.length} of ${count} messages within ${timeoutMs / 1000} s`);
    await sleep(20);
  }
}

const perSecond = (receipts) => {
  const times = receipts.map((m) => m.at).sort((a, b) => a - b);
  const seconds = (times[times.length - 1] - times[0]) / 1000;
  return { emails: receipts.length, seconds: Number(seconds.toFixed(2)), emailsPerSecond: Math.round((receipts.length - 1) / seconds) };
};

async function campaignTo(emailDomain) {
  const created = await bench.api('POST', '/campaigns', {
    name: emailDomain,
    subject: 'News for {{firstName}}',
    body: HTML,
    from: `news@${DOMAIN}`,
    audienceType: 'FILTERED',
    audienceFilter: { logic: 'AND', groups: [{ filters: [{ field: 'email', operator: 'contains', value: `@${emailDomain}` }] }] },
  });
  await bench.api('POST', `/campaigns/${created.data.id}/send`, {});
  return perSecond(await waitForReceipts((m) => m.to.endsWith(`@${emailDomain}`), EMAILS, 300_000));
}

/** POSTs a CSV of `rows` addresses at `domain`; answers the response and the seconds it took. */
async function importCsv(rows, domain) {
  const lines = ['email,reason'];
  for (let i = 0; i < rows; i++) lines.push(`s${i}@${domain},${i % 10 === 0 ? 'HARD_BOUNCE' : ''}`);
  const body = Buffer.from(`${lines.join('\n')}\n`);
  const { url, secretKey } = bench.apiBase();
  const started = Date.now();
  const res = await fetch(`${url}/suppressions/import`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${secretKey}`, 'Content-Type': 'text/csv' },
    body,
  });
  const json = await res.json();
  if (res.status !== 200) fail(`POST /suppressions/import: ${res.status} ${JSON.stringify(json)}`);
  return { result: json, seconds: Number(((Date.now() - started) / 1000).toFixed(2)), bytes: body.length };
}

async function main() {
  await bench.checkPrerequisites();
  sink = await bench.startSink();
  await bench.prepareDatabase();
  const projectId = await bench.startApi();
  await bench.insertDomain(projectId);
  const importOnly = process.env.BENCH_SUPPRESSION_IMPORT_ONLY === '1';
  const previous = importOnly && existsSync(RESULTS_FILE) ? JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) : null;
  const throughput = importOnly
    ? {
        ...previous?.throughput,
        generatedAt: previous?.throughput?.generatedAt ?? previous?.generatedAt,
        commit: previous?.throughput?.commit ?? null,
      }
    : { ...(await throughputScenario(projectId)), commit: runContext().commit };
  const imported = await importScenario();
  report(throughput, imported);
}

async function throughputScenario(projectId) {
  await bench.seedContacts(projectId, 1, EMAILS, 'plain.example');
  await bench.seedContacts(projectId, 1, EMAILS, 'listed.example');
  const workers = await bench.startWorkers(WORKERS, {
    MAIL_RATE_PER_SECOND: '10000',
    MAIL_SEND_CONCURRENCY: '64',
    MAIL_SMTP_POOL_SIZE: '8',
  });
  await bench.api('POST', '/v1/send', {
    to: Array.from({ length: 50 }, (_, i) => `warm${i}@warm.example`),
    from: `alerts@${DOMAIN}`,
    subject: 'warm',
    body: '<p>warm</p>',
  });
  await waitForReceipts((m) => m.to.endsWith('@warm.example'), 50, 60_000);

  const without = await campaignTo('plain.example');
  const seeded = await importCsv(SUPPRESSED, 'suppressed.example');
  await withClient(bench.databaseUrl, (c) => c.query('VACUUM ANALYZE suppressions'));
  const withList = await campaignTo('listed.example');
  await bench.stop(workers);
  const ratio = Number((withList.emailsPerSecond / without.emailsPerSecond).toFixed(3));
  return {
    generatedAt: new Date().toISOString(),
    workers: WORKERS,
    emails: EMAILS,
    suppressed: SUPPRESSED,
    without,
    withSuppressions: withList,
    ratio,
    seedImport: seeded,
  };
}

async function importScenario() {
  const idleRssMb = Math.round(rssMb(bench.apiPid()) ?? 0);
  const stopSampling = sampleRss([bench.apiPid()]);
  const imported = await importCsv(IMPORT_ROWS, 'import.example');
  const peakRssMb = Math.round((await stopSampling())[bench.apiPid()]);
  return {
    rows: IMPORT_ROWS,
    bytes: imported.bytes,
    seconds: imported.seconds,
    apiIdleRssMb: idleRssMb,
    apiPeakRssMb: peakRssMb,
    result: imported.result,
  };
}

function report(throughput, imported) {
  const { ratio, without, withSuppressions: withList } = throughput;
  const { seconds, apiPeakRssMb: peakRssMb, apiIdleRssMb: idleRssMb } = imported;
  const misses = [];
  if (ratio < 0.95) misses.push('throughput with 100,000 suppressed >= 0.95x');
  if (seconds >= 30) misses.push('import of 1,000,000 rows < 30 s');
  if (peakRssMb >= 300) misses.push('API RSS during the import < 300 MB');
  if (imported.result.imported !== IMPORT_ROWS) misses.push('every imported row added');
  console.log(
    `bench: campaign of ${EMAILS}, ${WORKERS} workers, rate lifted: ${without.emailsPerSecond}/s with no suppressions, ` +
      `${withList.emailsPerSecond}/s with ${SUPPRESSED} suppressed (ratio ${ratio}, goal >= 0.95: ${verdict(ratio >= 0.95)})`,
  );
  console.log(
    `bench: CSV import of ${IMPORT_ROWS} rows (${Math.round(imported.bytes / 1e6)} MB): ${seconds} s (goal < 30 s: ` +
      `${verdict(seconds < 30)}), API RSS ${idleRssMb} MB idle, peak ${peakRssMb} MB (goal < 300: ${verdict(peakRssMb < 300)}); ` +
      `${JSON.stringify(imported.result)}`,
  );
  console.log(misses.length ? `bench: MISSED: ${misses.join(', ')}` : 'bench: every suppression target met');
  // The commit, machine and load average (start and end of this run) go with the figures: the machine is
  // shared, and a loaded one stretches the import. With BENCH_SUPPRESSION_IMPORT_ONLY the throughput block
  // is the earlier run's (its own generatedAt and, when recorded, commit).
  writeBenchResult(
    RESULTS_FILE,
    { throughput, import: imported, missed: misses },
    { emails: EMAILS, workers: WORKERS, suppressed: SUPPRESSED, importRows: IMPORT_ROWS },
  );
  console.log(`written: ${path.relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE}`);
  writeSuppressionTable();
  console.log('bench/README.md: suppression figures rewritten from it');
}

await runBenchScript('bench:campaign suppression', main, bench.cleanup);
