import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { dkimVerify } from 'mailauth';
import type { DataSource } from 'typeorm';
import { QueueService, REDIS, REDIS_SETTINGS, type RedisSettings } from '@app/service-kit';
import type { MailConfig } from '../src/config/mail-config.js';
import { projectScope } from '../src/core/scope/project-scope.js';
import { EMAIL_QUEUE, EmailDeliveryQueue, MailEmailJob, MailEmailPriority } from '../src/modules/delivery/email-delivery.queue.js';
import { MAINTENANCE_QUEUE, MailMaintenanceJob } from '../src/modules/maintenance/maintenance.queue.js';
import { UnsubscribeLinks } from '../src/modules/unsubscribe/unsubscribe-links.js';
import {
  dkimResolver,
  emailRows,
  insertContact,
  insertEmails,
  insertSendRequest,
  waitFor,
  waitForStatus,
  type EmailFixture,
} from './support/delivery-fixtures.js';
import { DeliveryHarness, type SendingProject } from './support/delivery-harness.js';
import type { MailTestApp } from './support/mail-test-app.js';
import type { SmtpSink } from './support/smtp-sink.js';

const DOMAIN = 'mail.example.com';

describe('email delivery (real Postgres, Redis and SMTP)', () => {
  let h: DeliveryHarness;
  let t: MailTestApp;
  let sink: SmtpSink;
  let db: DataSource;
  let projectId: string;
  let sender: SendingProject;

  beforeAll(async () => {
    h = await DeliveryHarness.start({ MAIL_PUBLIC_URL: 'https://mail.test' });
    ({ t, sink, db } = h);
    sender = await h.sendingProject(`news@${DOMAIN}`);
    ({ projectId } = sender);
  });
  afterEach(() => h.stopWorker());
  afterAll(() => h?.close());

  /** A worker context like worker.ts builds, consuming the email and maintenance queues. */
  const startWorker = (overrides: Partial<MailConfig> = {}) => h.startWorker([EMAIL_QUEUE, MAINTENANCE_QUEUE], overrides);

  const queueEmails = (fixtures: EmailFixture[], priority?: number) => sender.queueEmails(fixtures, priority);
  const resolver = (name: string) => dkimResolver(sender.domain)(name);

  it('delivers the message as written: addresses, subject, headers, attachments, Message-ID, a valid DKIM signature', async () => {
    const attachment = Buffer.from('quarterly numbers\n');
    const sendRequestId = await insertSendRequest(db, projectId, [
      { filename: 'report.txt', content: attachment.toString('base64'), contentType: 'text/plain' },
    ]);
    const [id] = await queueEmails([
      {
        to: 'ada@example.net',
        toName: 'Ada Lovelace',
        fromName: 'Example News',
        replyTo: 'support@example.com',
        subject: 'Your report',
        html: '<h1>Hello &amp; welcome</h1><p>See <a href="https://example.com/r">the report</a>.</p>',
        headers: { 'X-Entity-Ref': 'ref-42' },
        sendRequestId,
      },
    ]);
    await startWorker();
    const [row] = await waitForStatus(db, [id], ['SENT', 'FAILED']);
    expect(row).toMatchObject({ status: 'SENT', attempts: 1, error: null, claimed_until: null, sent_at: expect.any(Date) });
    expect(row.provider_message_id).toMatch(/^250 OK queued as sink-\d+$/);

    const [message] = sink.messagesFor([id]);
    expect(message.envelope).toEqual({ from: `news@${DOMAIN}`, to: ['ada@example.net'] });
    const parsed = await simpleParser(message.raw);
    expect(parsed.from?.value).toEqual([{ address: `news@${DOMAIN}`, name: 'Example News' }]);
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value : null).toEqual([{ address: 'ada@example.net', name: 'Ada Lovelace' }]);
    expect(parsed.replyTo?.value).toEqual([{ address: 'support@example.com', name: '' }]);
    expect(parsed.subject).toBe('Your report');
    expect(parsed.messageId).toBe(`<${id}@${DOMAIN}>`);
    expect(parsed.headers.get('x-entity-ref')).toBe('ref-42');
    expect(parsed.html).toContain('<h1>Hello &amp; welcome</h1>');
    expect(parsed.text).toContain('Hello & welcome');
    expect(parsed.text).toContain('the report (https://example.com/r)');
    expect(parsed.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content.toString() }))).toEqual([
      { filename: 'report.txt', contentType: 'text/plain', content: attachment.toString() },
    ]);
    expect(parsed.headers.has('list-unsubscribe')).toBe(false);

    const dkim = await dkimVerify(message.raw, { resolver });
    expect(dkim.results).toHaveLength(1);
    expect(dkim.results[0]).toMatchObject({ signingDomain: DOMAIN, selector: sender.domain.selector, status: { result: 'pass' } });
  }, 60_000);

  it('marketing mail carries List-Unsubscribe and List-Unsubscribe-Post for its contact', async () => {
    const contactId = await insertContact(db, projectId, 'grace@example.net');
    const [id] = await queueEmails([{ to: 'grace@example.net', type: 'MARKETING', contactId }], MailEmailPriority.Campaign);
    await startWorker();
    await waitForStatus(db, [id], ['SENT']);
    const parsed = await sink.parse(sink.messagesFor([id])[0]);
    const url = t.app.get(UnsubscribeLinks).urlFor(projectId, contactId);
    expect(url).toMatch(/^https:\/\/mail\.test\/unsubscribe\/[A-Za-z0-9_-]+$/);
    // mailparser folds List-* headers into a `list` structure; the raw lines are what receivers read.
    const line = (key: string) => parsed.headerLines.find((h) => h.key === key)?.line.replace(/\r\n[ \t]+/g, ' ');
    expect(line('list-unsubscribe')).toBe(`List-Unsubscribe: <${url}>`);
    expect(line('list-unsubscribe-post')).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    // RFC 8058: both headers must be covered by the DKIM signature.
    const dkim = await dkimVerify(sink.messagesFor([id])[0].raw, { resolver });
    expect(dkim.results[0].status.result).toBe('pass');
    expect(line('dkim-signature')).toMatch(/h=[^;]*list-unsubscribe:list-unsubscribe-post/i);
  }, 60_000);

  it('does not send marketing mail to a contact who unsubscribed after it was queued', async () => {
    const contactId = await insertContact(db, projectId, 'gone@example.net', false);
    const [id] = await queueEmails([{ to: 'gone@example.net', type: 'MARKETING', contactId }], MailEmailPriority.Campaign);
    await startWorker();
    const [row] = await waitForStatus(db, [id], ['FAILED', 'SENT']);
    expect(row).toMatchObject({ status: 'FAILED', error: 'contact unsubscribed before delivery' });
    expect(sink.messagesFor([id])).toHaveLength(0);
  }, 60_000);

  it('an SMTP 451 is retried after the soft-bounce delay and the email is then sent once', async () => {
    sink.refuseNext(451);
    const refusalsBefore = sink.refusals.length;
    const [id] = await queueEmails([{ subject: 'retry me', to: 'retry@example.net' }]);
    await startWorker({ deliverability: { ...t.config.deliverability, softBounceDelaysMs: [1000] } });
    const [row] = await waitForStatus(db, [id], ['SENT', 'FAILED'], 30_000);
    expect(row).toMatchObject({ status: 'SENT', attempts: 2, error: null });
    expect(sink.refusals.slice(refusalsBefore).map((r) => r.code)).toEqual([451]);
    expect(sink.messagesFor([id])).toHaveLength(1);
  }, 60_000);

  it('an SMTP 550 fails the email at once, without a retry', async () => {
    sink.refuseNext(550);
    const refusalsBefore = sink.refusals.length;
    // A unique address: the bounce suppresses it (deliverability-delivery.spec.ts).
    const [id] = await queueEmails([{ subject: 'refused', to: 'refused@example.net' }]);
    await startWorker();
    const [row] = await waitForStatus(db, [id], ['SENT', 'FAILED']);
    expect(row).toMatchObject({ status: 'FAILED', attempts: 1, failed_at: expect.any(Date), claimed_until: null });
    expect(row.error).toMatch(/^SMTP 550: 550 .*mailbox unavailable/);
    // Positive signal first: the job has left the queue (a retry would keep it there, delayed by its
    // backoff), so no second attempt can come; then the absence of one.
    const queue = t.app.get(QueueService).queue(EMAIL_QUEUE);
    await waitFor(async () => ((await queue.getJob(id)) === undefined ? true : null), 15_000, 'the job to leave the queue');
    expect((await emailRows(db, [id]))[0]).toMatchObject({ status: 'FAILED', attempts: 1 });
    expect(sink.refusals.length - refusalsBefore).toBe(1);
  }, 60_000);

  it('an email whose from domain is not verified fails permanently and sends nothing', async () => {
    const ids = await insertEmails(db, projectId, [{ from: 'someone@unverified.example.org' }]);
    await t.app.get(EmailDeliveryQueue).enqueue([{ id: ids[0], projectId, priority: MailEmailPriority.Transactional }]);
    await startWorker();
    const [row] = await waitForStatus(db, ids, ['SENT', 'FAILED']);
    expect(row.status).toBe('FAILED');
    expect(row.error).toBe('no verified domain for the from address someone@unverified.example.org: verify its domain to send from it');
    expect(sink.messagesFor(ids)).toHaveLength(0);
  }, 60_000);

  it('reuses its pooled SMTP connections: 20 emails over at most MAIL_SMTP_POOL_SIZE connections', async () => {
    const ids = await queueEmails(Array.from({ length: 20 }, (_, i) => ({ subject: `pooled ${i}` })));
    const connectionsBefore = sink.stats.connections;
    await startWorker({ smtpPoolSize: 2 });
    await waitForStatus(db, ids, ['SENT']);
    expect(sink.messagesFor(ids)).toHaveLength(20);
    // A transport that opened a connection per message (nodemailer given `{url, pool}` reads the URL alone) made 20.
    expect(sink.stats.connections - connectionsBefore).toBeLessThanOrEqual(2);
  }, 60_000);

  it('sends once whatever the duplicates: enqueued twice, a second job for the same email, a job after SENT', async () => {
    const [id] = await queueEmails([{ subject: 'once' }]);
    const deliveryQueue = t.app.get(EmailDeliveryQueue);
    await deliveryQueue.enqueue([{ id, projectId, priority: MailEmailPriority.Transactional }]);
    const queue = t.app.get(QueueService).queue(EMAIL_QUEUE);
    // Another job id for the same email: what a redelivery or a producer bug looks like to the processor.
    await queue.add(MailEmailJob.Deliver, { emailId: id, projectId }, { jobId: `${id}-dup` });
    expect(await queue.getJobCounts('prioritized', 'waiting')).toEqual({ prioritized: 1, waiting: 1 });
    await startWorker();
    await waitForStatus(db, [id], ['SENT']);
    await waitFor(async () => ((await queue.getJob(`${id}-dup`))?.finishedOn ? true : null), 20_000, 'the duplicate job');
    const late = await queue.add(MailEmailJob.Deliver, { emailId: id, projectId }, { jobId: `${id}-late` });
    const finished = await waitFor(
      async () => {
        const job = await queue.getJob(late.id!);
        return job?.finishedOn ? job : null;
      },
      20_000,
      'the late job',
    );
    expect(finished.returnvalue).toEqual({ status: 'SKIPPED', reason: 'already SENT' });
    expect(sink.messagesFor([id])).toHaveLength(1);
    expect((await emailRows(db, [id]))[0]).toMatchObject({ status: 'SENT', attempts: 1 });
  }, 60_000);

  it('transactional mail overtakes queued campaign mail', async () => {
    const campaign = await queueEmails(
      Array.from({ length: 20 }, (_, i) => ({ subject: `campaign ${i}` })),
      MailEmailPriority.Campaign,
    );
    await startWorker({ ratePerSecond: 2 });
    // The backlog is being drained at 2/s before the transactional email is queued.
    await sink.waitForMessages(() => sink.messagesFor(campaign).length >= 2);
    const [transactional] = await queueEmails([{ subject: 'password reset' }], MailEmailPriority.Transactional);
    await waitForStatus(db, [transactional], ['SENT'], 30_000);
    const order = sink.messagesFor([...campaign, transactional]).map((m) => m.messageId);
    const position = order.indexOf(`<${transactional}@${DOMAIN}>`);
    expect(position).toBeGreaterThanOrEqual(2);
    expect(position).toBeLessThanOrEqual(5);
    expect(order.length).toBeLessThan(10);
    await h.stopWorker(); // the rest of the backlog stays queued; later tests do not wait for it
    await t.app.get(QueueService).queue(EMAIL_QUEUE).obliterate({ force: true });
    await db.query(`UPDATE emails SET status = 'FAILED', error = 'test cleanup' WHERE id = ANY($1::uuid[]) AND status = 'QUEUED'`, [
      campaign,
    ]);
  }, 60_000);

  it('the requeue job rebuilds the queue from Postgres after Redis lost it', async () => {
    const ids = await queueEmails([{ subject: 'lost 1' }, { subject: 'lost 2' }, { subject: 'lost 3' }]);
    const queues = t.app.get(QueueService);
    await queues.queue(EMAIL_QUEUE).obliterate({ force: true });
    expect(await queues.queue(EMAIL_QUEUE).getJobCounts('prioritized', 'waiting')).toEqual({ prioritized: 0, waiting: 0 });
    // Rows only count as lost once they are a minute old.
    await db.query(`UPDATE emails SET queued_at = now() - interval '2 minutes' WHERE id = ANY($1::uuid[])`, [ids]);
    await startWorker();
    await queues.add(MAINTENANCE_QUEUE, MailMaintenanceJob.RequeueEmails, {});
    const rows = await waitForStatus(db, ids, ['SENT', 'FAILED']);
    expect(rows.map((r) => r.status)).toEqual(['SENT', 'SENT', 'SENT']);
    expect(sink.messagesFor(ids)).toHaveLength(3);
  }, 60_000);

  it('an enqueue that fails after the commit does not fail the caller: the rows stay QUEUED and the requeue job sends them', async () => {
    const ids = await insertEmails(db, projectId, [{ subject: 'unreachable 1' }, { subject: 'unreachable 2' }], { from: `news@${DOMAIN}` });
    // A producer whose Redis connection is gone (closed, so every add fails at once instead of waiting).
    const closed = new QueueService(t.app.get<RedisSettings>(REDIS_SETTINGS));
    closed.queue(EMAIL_QUEUE);
    await closed.onApplicationShutdown();
    const unreachable = new EmailDeliveryQueue(closed, t.app.get(REDIS));
    await expect(unreachable.enqueue([{ id: ids[0], projectId, priority: MailEmailPriority.Transactional }])).rejects.toThrow();

    await expect(
      unreachable.enqueueOrLeaveToSweep(projectScope(projectId), { emailIds: ids, priority: MailEmailPriority.Transactional }),
    ).resolves.toBeUndefined();
    expect(await t.app.get(EmailDeliveryQueue).existingJobIds(ids)).toEqual(new Set());
    expect((await emailRows(db, ids)).map((r) => r.status)).toEqual(['QUEUED', 'QUEUED']);

    await db.query(`UPDATE emails SET queued_at = now() - interval '2 minutes' WHERE id = ANY($1::uuid[])`, [ids]);
    await startWorker();
    await t.app.get(QueueService).add(MAINTENANCE_QUEUE, MailMaintenanceJob.RequeueEmails, {});
    const rows = await waitForStatus(db, ids, ['SENT', 'FAILED']);
    expect(rows.map((r) => r.status)).toEqual(['SENT', 'SENT']);
    expect(sink.messagesFor(ids)).toHaveLength(2);
  }, 60_000);

  it('without MAIL_SMTP_URL each message is written to the outbox as a parseable .eml file', async () => {
    const outboxDir = mkdtempSync(path.join(os.tmpdir(), 'mail-outbox-'));
    try {
      const [id] = await queueEmails([{ to: 'dev@example.net', subject: 'Look at me' }]);
      await startWorker({ smtpUrl: null, outboxDir: path.join(outboxDir, 'nested') });
      const [row] = await waitForStatus(db, [id], ['SENT', 'FAILED']);
      const file = path.join(outboxDir, 'nested', `${id}.eml`);
      expect(row).toMatchObject({ status: 'SENT', provider_message_id: file });
      const raw = readFileSync(file);
      const parsed = await simpleParser(raw);
      expect(parsed).toMatchObject({ subject: 'Look at me', messageId: `<${id}@${DOMAIN}>` });
      expect((await dkimVerify(raw, { resolver })).results[0].status.result).toBe('pass');
    } finally {
      rmSync(outboxDir, { recursive: true, force: true });
    }
  }, 60_000);
});
