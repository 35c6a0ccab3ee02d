import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { QueueService } from '@app/service-kit';
import { findSamples, parsePrometheusText, sampleValue } from '@app/service-kit/testing';
import { insertEmails } from './support/delivery-fixtures.js';
import { createProject } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { startWorkerProcess, workerEnv, type WorkerProcess } from './support/worker-process.js';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

async function scrape(url: string) {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  return parsePrometheusText(await res.text());
}

/**
 * Metrics that do not lie when it matters (issue #33): the email backlog from an index, absent series
 * and an error counter when Postgres cannot answer (never zeros), `build_info`, and the queue gauges
 * exported by one instance of the app only (a Redis lease), handed over when it stops.
 */
describe('mail-api metrics: truthful under failure, exported once', () => {
  let t: MailTestApp;
  let db: DataSource;
  let worker: WorkerProcess | undefined;
  let apiClosed = false;

  beforeAll(async () => {
    t = await startMailApp();
    db = t.app.get(DataSource);
    const project = await createProject(t);
    await insertEmails(db, project.id, [{}, {}]);
    await t.app.get(QueueService).add('mail-ops-exporter', 'probe', {});
  });
  afterAll(async () => {
    await worker?.kill();
    if (!apiClosed) await t?.app.close();
    await t?.cleanup();
  });

  it('reads the backlog through the partial index of unfinished emails, not a scan of the table', async () => {
    await db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      const [{ 'QUERY PLAN': plan }] = await tx.query<{ 'QUERY PLAN': unknown }[]>(
        `EXPLAIN (FORMAT JSON) SELECT status, count(*)::int AS count FROM emails WHERE status IN ('QUEUED', 'SENDING') GROUP BY status`,
      );
      expect(JSON.stringify(plan)).toContain('emails_unfinished_idx');
    });
  });

  it('leaves the mail series absent and counts the error when the read fails, then recovers', async () => {
    await db.query('ALTER TABLE emails RENAME TO emails_hidden_for_test');
    let samples;
    try {
      samples = await scrape(t.url);
    } finally {
      await db.query('ALTER TABLE emails_hidden_for_test RENAME TO emails');
    }
    for (const name of ['mail_emails', 'mail_campaigns', 'mail_campaign_total_recipients']) expect(findSamples(samples, name)).toEqual([]);
    expect(sampleValue(samples, 'mail_metrics_read_errors_total')).toBe(1);
    // A failed read is not cached: the next scrape reads again.
    const again = await scrape(t.url);
    expect(sampleValue(again, 'mail_emails', { status: 'QUEUED' })).toBe(2);
    expect(sampleValue(again, 'mail_emails', { status: 'SENDING' })).toBe(0);
    expect(findSamples(again, 'mail_emails', { status: 'SENT' })).toEqual([]);
    expect(sampleValue(again, 'mail_metrics_read_errors_total')).toBe(1);
  });

  it('exports build_info with the app version and Node version', async () => {
    const samples = await scrape(t.url);
    expect(sampleValue(samples, 'build_info', { service: 'mail-api', version: VERSION, node_version: process.version })).toBe(1);
  });

  it('exports the queue gauges from one instance only, and hands them over when it stops', async () => {
    const api = await scrape(t.url);
    expect(sampleValue(api, 'bullmq_queue_exporter')).toBe(1);
    expect(sampleValue(api, 'bullmq_queue_jobs', { queue: 'mail-ops-exporter', state: 'waiting' })).toBe(1);
    worker = startWorkerProcess('exporter', workerEnv(t.config, { MAIL_WORKER_METRICS_PORT: '0' }));
    await worker.ready;
    const match = /worker metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(worker.output());
    if (!match) throw new Error(`no metrics line in:\n${worker.output()}`);
    const workerUrl = match[1];
    const before = await scrape(workerUrl);
    expect(sampleValue(before, 'bullmq_queue_exporter', { service: 'mail-worker' })).toBe(0);
    expect(findSamples(before, 'bullmq_queue_jobs')).toEqual([]);
    expect(sampleValue(before, 'build_info', { service: 'mail-worker', version: VERSION })).toBe(1);
    // The API stops (its lease released): the worker's next scrape takes over. Only the app: the file's
    // database and queue keys stay for the worker until afterAll.
    await t.app.close();
    apiClosed = true;
    const after = await scrape(workerUrl);
    expect(sampleValue(after, 'bullmq_queue_exporter')).toBe(1);
    expect(sampleValue(after, 'bullmq_queue_jobs', { queue: 'mail-ops-exporter', state: 'waiting' })).toBe(1);
  }, 60_000);
});
