import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { type MailDomain, type MailProjectCredentials } from '@app/contracts';
import { QueueService } from '@app/service-kit';
import { EMAIL_QUEUE } from '../src/modules/delivery/email-delivery.queue.js';
import { MAINTENANCE_QUEUE, MailMaintenanceJob } from '../src/modules/maintenance/maintenance.queue.js';
import { emailRows, insertEmails, insertSendRequest, insertVerifiedDomain, waitFor, waitForStatus } from './support/delivery-fixtures.js';
import { startDnsTestServer, type DnsTestServer } from './support/dns-test-server.js';
import { bearer, createProject } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { publishRecords } from './support/verified-domain.js';
import { startWorkerProcess, workerEnv, type WorkerProcess } from './support/worker-process.js';

/** Shorter than the 600 s default (and its minimum is 5): a second scheduled recheck comes within the test. */
const RECHECK_SECONDS = 5;

/** The job schedulers stored in Redis for the queue, as BullMQ reads them back. */
async function schedulersOf(queue: Queue): Promise<{ id: string; name: string; every?: number }[]> {
  const all = await queue.getJobSchedulers(0, -1, true);
  return all.map((s) => ({ id: s.key, name: s.name, every: s.every })).sort((a, b) => a.id.localeCompare(b.id));
}

/** Finished runs of `name` that its scheduler produced (BullMQ stamps them with the scheduler's id). */
async function scheduledRuns(queue: Queue, name: string) {
  const jobs = await queue.getJobs(['completed', 'failed']);
  return jobs.filter((j) => j.name === name && j.repeatJobKey === name);
}

/**
 * The mail worker's recurring jobs (src/modules/maintenance/recurring-jobs.ts) against the real Redis
 * queue: what the compiled worker (`node dist/worker.js`, built by `npm run build -w mail-api`)
 * registers, and its scheduled runs doing their work in Postgres. No processor is called here, and no
 * maintenance job is added by hand.
 */
describe('mail job schedulers (real worker processes)', () => {
  let dns: DnsTestServer;
  let t: MailTestApp;
  let db: DataSource;
  let queue: Queue;
  let project: MailProjectCredentials;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    dns = await startDnsTestServer({});
    // No MAIL_SMTP_URL: delivered mail goes to the outbox directory, enough to see an email sent.
    t = await startMailApp({ env: { MAIL_DNS_SERVERS: dns.address, MAIL_DOMAIN_RECHECK_SECONDS: String(RECHECK_SECONDS) } });
    db = t.app.get(DataSource);
    queue = t.app.get(QueueService).queue(MAINTENANCE_QUEUE);
    project = await createProject(t, 'Schedulers');
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) {
      const exit = await w.kill('SIGTERM');
      if (exit.code !== null) throw new Error(`worker ${w.name} exited with ${exit.code}:\n${w.output()}`);
    }
    // Each test starts without schedulers or jobs.
    await queue.obliterate({ force: true });
    await t.app.get(QueueService).queue(EMAIL_QUEUE).obliterate({ force: true });
  });
  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  async function startWorker(name: string): Promise<WorkerProcess> {
    // workerEnv carries the test config: MAIL_DOMAIN_RECHECK_SECONDS and MAIL_DNS_SERVERS included.
    const worker = startWorkerProcess(name, workerEnv(t.config));
    workers.push(worker);
    await worker.ready;
    return worker;
  }

  it('each worker registers the four schedulers with their intervals; a second worker makes no second set', async () => {
    expect(t.config.domainRecheckSeconds).toBe(RECHECK_SECONDS);
    expect(await schedulersOf(queue)).toEqual([]);
    const expected = [
      { id: MailMaintenanceJob.RecheckDomains, name: MailMaintenanceJob.RecheckDomains, every: RECHECK_SECONDS * 1000 },
      { id: MailMaintenanceJob.RequeueEmails, name: MailMaintenanceJob.RequeueEmails, every: 60_000 },
      { id: MailMaintenanceJob.PurgeIdempotencyKeys, name: MailMaintenanceJob.PurgeIdempotencyKeys, every: 3600_000 },
      { id: MailMaintenanceJob.PurgeSendRequests, name: MailMaintenanceJob.PurgeSendRequests, every: 3600_000 },
      { id: MailMaintenanceJob.SweepCampaigns, name: MailMaintenanceJob.SweepCampaigns, every: 30_000 },
      { id: MailMaintenanceJob.SweepWorkflows, name: MailMaintenanceJob.SweepWorkflows, every: 30_000 },
    ].sort((a, b) => a.id.localeCompare(b.id));
    await startWorker('A');
    expect(await schedulersOf(queue)).toEqual(expected);
    await startWorker('B');
    expect(await schedulersOf(queue)).toEqual(expected);
  }, 60_000);

  it('a pending domain is rechecked every MAIL_DOMAIN_RECHECK_SECONDS: records published after one run are found by the next', async () => {
    const auth = bearer(project.secretKey);
    const created = await request(t.url).post('/domains').set(auth).send({ domain: 'scheduled.example' }).expect(201);
    const domain = created.body as MailDomain;
    const get = async () => (await request(t.url).get(`/domains/${domain.id}`).set(auth).expect(200)).body as MailDomain;
    expect(await get()).toMatchObject({ status: 'PENDING', lastCheckedAt: null });
    await startWorker('A');
    // The first run comes at start: nothing is published yet, so the check fails.
    const checked = await waitFor(
      async () => {
        const d = await get();
        return d.lastCheckedAt ? d : null;
      },
      20_000,
      'the first scheduled recheck',
    );
    expect(checked).toMatchObject({ status: 'FAILED', verified: false });
    publishRecords(dns, domain.records);
    // Nobody calls verify: only a later scheduled run can find the records.
    const verified = await waitFor(
      async () => {
        const d = await get();
        return d.status === 'VERIFIED' ? d : null;
      },
      (RECHECK_SECONDS + 10) * 1000,
      'a later scheduled recheck to verify the domain',
    );
    expect(verified).toMatchObject({ verified: true });
    // The run's completion is recorded in Redis just after its update commits. One domain is pending here.
    const verifying = await waitFor(
      async () => {
        const runs = (await scheduledRuns(queue, MailMaintenanceJob.RecheckDomains)).filter((j) => j.returnvalue?.verified > 0);
        return runs.length > 0 ? runs : null;
      },
      10_000,
      'the verifying run to complete',
    );
    expect(verifying.map((j) => j.returnvalue)).toEqual([{ checked: 1, verified: 1 }]);
  }, 60_000);

  it('the scheduled runs at worker start purge expired idempotency keys and old send requests, and requeue lost emails', async () => {
    await insertVerifiedDomain(db, project.id, 'requeue.example.com');
    await db.query(
      `INSERT INTO idempotency_keys (project_id, key, request_hash, created_at)
       VALUES ($1, 'expired', 'h', now() - interval '25 hours'), ($1, 'fresh', 'h', now())`,
      [project.id],
    );
    const oldRequest = await insertSendRequest(db, project.id, [{ filename: 'a.txt', content: 'YQ==' }]);
    const newRequest = await insertSendRequest(db, project.id, [{ filename: 'b.txt', content: 'Yg==' }]);
    await db.query(`UPDATE send_requests SET created_at = now() - interval '2 days' WHERE id = $1`, [oldRequest]);
    // A QUEUED email with no job in Redis (as after losing Redis), old enough to count as lost.
    const [lost] = await insertEmails(db, project.id, [{ from: 'ops@requeue.example.com', subject: 'lost' }]);
    await db.query(`UPDATE emails SET queued_at = now() - interval '2 minutes' WHERE id = $1`, [lost]);
    expect(await t.app.get(QueueService).queue(EMAIL_QUEUE).getJob(lost)).toBeUndefined();

    await startWorker('A');
    const [row] = await waitForStatus(db, [lost], ['SENT', 'FAILED'], 30_000);
    expect(row).toMatchObject({ status: 'SENT', attempts: 1 });
    for (const name of [MailMaintenanceJob.PurgeIdempotencyKeys, MailMaintenanceJob.PurgeSendRequests, MailMaintenanceJob.RequeueEmails]) {
      await waitFor(async () => ((await scheduledRuns(queue, name)).length > 0 ? true : null), 20_000, `a scheduled ${name} run`);
    }
    const keys = await db.query(`SELECT key FROM idempotency_keys WHERE project_id = $1 ORDER BY key`, [project.id]);
    expect(keys).toEqual([{ key: 'fresh' }]);
    const requests = await db.query(`SELECT id FROM send_requests WHERE id = ANY($1::uuid[])`, [[oldRequest, newRequest]]);
    expect(requests).toEqual([{ id: newRequest }]);
    // One run each (their intervals are a minute and an hour), with what it did.
    const results = async (name: string) => (await scheduledRuns(queue, name)).map((j) => j.returnvalue);
    expect(await results(MailMaintenanceJob.PurgeIdempotencyKeys)).toEqual([{ deleted: 1 }]);
    expect(await results(MailMaintenanceJob.PurgeSendRequests)).toEqual([{ deleted: 1 }]);
    expect(await results(MailMaintenanceJob.RequeueEmails)).toEqual([{ checked: 1, requeued: 1 }]);
    expect((await emailRows(db, [lost]))[0].status).toBe('SENT');
  }, 60_000);
});
