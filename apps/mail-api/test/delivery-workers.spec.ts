import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { QueueService } from '@app/service-kit';
import { EMAIL_QUEUE, EmailDeliveryQueue, MailEmailPriority } from '../src/modules/delivery/email-delivery.queue.js';
import { emailRows, insertEmails, insertVerifiedDomain, waitFor, waitForStatus } from './support/delivery-fixtures.js';
import { createProject } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';
import { startWorkerProcess, workerEnv, type WorkerProcess } from './support/worker-process.js';

const DOMAIN = 'workers.example.com';
const LOCK_SECONDS = 2;

/**
 * The email pipeline across real worker processes (`node dist/worker.js`, built by `npm test`'s
 * build step): the deployment-wide rate limit, a worker stopped with SIGTERM, and a worker killed in
 * the middle of a delivery.
 */
describe('email delivery across worker processes', () => {
  let t: MailTestApp;
  let sink: SmtpSink;
  let db: DataSource;
  let projectId: string;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    sink = await startSmtpSink();
    // The API side only: fixtures and the producer. No in-process worker.
    t = await startMailApp({ env: { MAIL_SMTP_URL: sink.url } });
    db = t.app.get(DataSource);
    projectId = (await createProject(t)).id;
    await insertVerifiedDomain(db, projectId, DOMAIN);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.kill('SIGTERM')));
  });
  afterAll(async () => {
    await t?.close();
    await sink?.close();
  });

  async function startWorker(name: string, env: Record<string, string>): Promise<WorkerProcess> {
    const worker = startWorkerProcess(name, workerEnv(t.config, { MAIL_SEND_LOCK_SECONDS: String(LOCK_SECONDS), ...env }));
    workers.push(worker);
    await worker.ready;
    return worker;
  }

  async function queueEmails(count: number, subject: string): Promise<string[]> {
    const ids = await insertEmails(
      db,
      projectId,
      Array.from({ length: count }, (_, i) => ({ subject: `${subject} ${i}` })),
      {
        from: `ops@${DOMAIN}`,
      },
    );
    await t.app.get(EmailDeliveryQueue).enqueue(ids.map((id) => ({ id, projectId, priority: MailEmailPriority.Transactional })));
    return ids;
  }

  /** The most messages the sink accepted within any span of `spanMs` (each span starting at a receipt). */
  function busiest(receivedAt: number[], spanMs: number): number {
    const times = [...receivedAt].sort((a, b) => a - b);
    let most = 0;
    for (let i = 0, j = 0; i < times.length; i++) {
      while (j < times.length && times[j] < times[i] + spanMs) j++;
      most = Math.max(most, j - i);
    }
    return most;
  }

  it('two processes share one rate: at 5/s the sink sees 5/s (within send-time spread), not the 10/s of a leaked limit, each email once', async () => {
    const rate = 5;
    await Promise.all([startWorker('A', { MAIL_RATE_PER_SECOND: String(rate) }), startWorker('B', { MAIL_RATE_PER_SECOND: String(rate) })]);
    const ids = await queueEmails(30, 'rate');
    const rows = await waitForStatus(db, ids, ['SENT', 'FAILED'], 50_000);
    expect(rows.every((r) => r.status === 'SENT' && r.attempts === 1)).toBe(true);
    const received = sink.messagesFor(ids);
    expect(received).toHaveLength(30);
    expect(new Set(received.map((m) => m.messageId)).size).toBe(30);
    // BullMQ's limiter is kept in Redis, so it counts the job starts of all processes together; at
    // 5/s (sendingLimiter) one email may start per 200 ms slot. The sink sees start + send time, and
    // send times differ (the first sends open the pooled SMTP connections, tens of ms slower), so
    // receipts can sit closer than their slots. A span of 750 ms holds at most 4 slots' starts, plus 2
    // moved in by that spread (a send up to 450 ms slower than the next: a slower machine of this kind
    // under the whole test run showed 6 in 750 ms). A leaked limit, each process at 5/s, puts 7 or 8
    // there, and halves the run's length below.
    const times = received.map((m) => m.receivedAt);
    expect(busiest(times, 750)).toBeLessThanOrEqual(rate + 1);
    // And over the whole run the rate holds: 30 emails at 5/s take at least 29 slots of 200 ms (less the spread).
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(((ids.length - 1) * 1000) / rate - 450);
  }, 60_000);

  it('at the default 14/s (two emails per 143 ms slot): 14/s at the sink within send-time spread, each email once', async () => {
    const rate = 14;
    await Promise.all([startWorker('A', {}), startWorker('B', {})]);
    const ids = await queueEmails(56, 'default rate');
    const rows = await waitForStatus(db, ids, ['SENT', 'FAILED'], 50_000);
    expect(rows.every((r) => r.status === 'SENT' && r.attempts === 1)).toBe(true);
    const times = sink.messagesFor(ids).map((m) => m.receivedAt);
    expect(times).toHaveLength(56);
    // The limiter bounds starts; the sink sees start + send time, which varies more on a busy machine
    // (a pair delayed by a slow send lands next to the following one). 700 ms hold at most 5 slot starts
    // (10 emails), plus up to three pairs moved into the span by that spread (up to 450 ms, as above);
    // a leaked limit, each process at 14/s, puts about 20 there.
    expect(busiest(times, 700)).toBeLessThanOrEqual(rate + 2);
    // 28 slots of 143 ms: the last pair starts 27 slots after the first, less the spread. (How close
    // the limiter comes to 14/s is a benchmark figure: bench/campaign/delivery.mjs.)
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(27 * 143 - 450);
  }, 60_000);

  it('SIGTERM with a send in flight: the worker finishes it before exiting, leaves no job active, and the next worker sends the rest once', async () => {
    const a = await startWorker('A', {});
    sink.delayNextData(3000); // A's first DATA answer is held: the send is in flight when the signal comes
    const dataBefore = sink.stats.dataReceived;
    const [first] = await queueEmails(1, 'in flight at SIGTERM');
    await waitFor(() => (sink.stats.dataReceived > dataBefore ? true : null), 20_000, 'A to send the message data');
    const backlog = await queueEmails(30, 'backlog at SIGTERM');
    expect((await emailRows(db, [first]))[0]).toMatchObject({ status: 'SENDING', attempts: 1 });

    const exit = await a.kill('SIGTERM');
    // Nest's shutdown hook closes the app, then re-raises the signal; a failed shutdown would exit 1.
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    // Read at the moment of exit: the held send was finished, not abandoned (a plain kill leaves it SENDING).
    expect((await emailRows(db, [first]))[0]).toMatchObject({ status: 'SENT', attempts: 1, error: null });
    expect(sink.messagesFor([first])).toHaveLength(1);
    // Whatever else A had started finished too: every email is sent or still queued, no job is left active.
    const rows = await emailRows(db, backlog);
    expect(rows.filter((r) => r.status !== 'SENT' && r.status !== 'QUEUED')).toEqual([]);
    expect(rows.some((r) => r.status === 'QUEUED')).toBe(true);
    expect(await t.app.get(QueueService).queue(EMAIL_QUEUE).getJobCounts('active')).toEqual({ active: 0 });

    await startWorker('B', {});
    const after = await waitForStatus(db, backlog, ['SENT', 'FAILED'], 40_000);
    expect(after.filter((r) => r.status !== 'SENT' || r.attempts !== 1)).toEqual([]);
    expect(sink.messagesFor([first, ...backlog])).toHaveLength(31);
  }, 60_000);

  it('a worker killed during the SMTP transaction: another takes over after the lock and the email arrives once', async () => {
    const a = await startWorker('A', {});
    sink.delayNextData(60_000); // A's DATA answer is held: the transaction stays open until A dies
    const dataBefore = sink.stats.dataReceived;
    const [id] = await queueEmails(1, 'killed mid-DATA');
    await waitFor(() => (sink.stats.dataReceived > dataBefore ? true : null), 20_000, 'A to send the message data');
    expect((await emailRows(db, [id]))[0]).toMatchObject({ status: 'SENDING', attempts: 1 });
    await startWorker('B', {});
    await a.kill('SIGKILL');
    const [row] = await waitForStatus(db, [id], ['SENT', 'FAILED'], 40_000);
    expect(row).toMatchObject({ status: 'SENT', attempts: 2 });
    expect(sink.messagesFor([id])).toHaveLength(1);
  }, 60_000);

  it('a worker killed after taking the job but before any SMTP: another takes over and the email arrives once', async () => {
    const a = await startWorker('A', {});
    sink.delayNextConnection(60_000); // A's connection gets no greeting: no SMTP command is ever sent
    const connectionsBefore = sink.stats.connections;
    const dataBefore = sink.stats.dataReceived;
    const [id] = await queueEmails(1, 'killed before SMTP');
    await waitFor(() => (sink.stats.connections > connectionsBefore ? true : null), 20_000, 'A to connect');
    expect((await emailRows(db, [id]))[0]).toMatchObject({ status: 'SENDING', attempts: 1 });
    await startWorker('B', {});
    await a.kill('SIGKILL');
    const [row] = await waitForStatus(db, [id], ['SENT', 'FAILED'], 40_000);
    expect(row).toMatchObject({ status: 'SENT', attempts: 2 });
    expect(sink.messagesFor([id])).toHaveLength(1);
    expect(sink.stats.dataReceived - dataBefore).toBe(1);
  }, 60_000);
});
