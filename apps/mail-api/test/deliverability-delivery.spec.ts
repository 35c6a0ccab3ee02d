import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { dkimVerify } from 'mailauth';
import { DataSource } from 'typeorm';
import { MAIL_EMAIL_STATUSES } from '@app/contracts';
import { REDIS } from '@app/service-kit';
import type { MailConfig } from '../src/config/mail-config.js';
import { EMAIL_QUEUE } from '../src/modules/delivery/email-delivery.queue.js';
import { isThrottling } from '../src/modules/delivery/relay-throttle.js';
import { Verp } from '../src/modules/delivery/verp.js';
import { dkimResolver, insertContact, waitForStatus, type EmailFixture } from './support/delivery-fixtures.js';
import { DeliveryHarness, type SendingProject } from './support/delivery-harness.js';
import type { MailTestApp } from './support/mail-test-app.js';
import type { SmtpSink } from './support/smtp-sink.js';

const DOMAIN = 'news.example.com';

describe('deliverability at the SMTP hand-off (real Postgres, Redis and SMTP)', () => {
  let h: DeliveryHarness;
  let t: MailTestApp;
  let sink: SmtpSink;
  let db: DataSource;
  let sender: SendingProject;
  let projectId: string;

  beforeAll(async () => {
    h = await DeliveryHarness.start({ MAIL_PUBLIC_URL: 'https://mail.test' });
    ({ t, sink, db } = h);
    sender = await h.sendingProject(`hello@${DOMAIN}`);
    projectId = sender.projectId;
  });
  afterEach(async () => {
    sink.answerWith(null);
    await h.stopWorker();
  });
  afterAll(() => h?.close());

  const startWorker = (deliverability: Partial<MailConfig['deliverability']> = {}) =>
    h.startWorker([EMAIL_QUEUE], { deliverability: { ...t.config.deliverability, ...deliverability } });

  const queueEmails = (fixtures: EmailFixture[]) => sender.queueEmails(fixtures);

  const suppressions = (email: string) =>
    db.query<{ reason: string; source: string; detail: string | null }[]>(
      `SELECT reason, source, detail FROM suppressions WHERE project_id = $1 AND lower(email) = lower($2)`,
      [projectId, email],
    );
  const events = (contactId: string) =>
    db.query<{ name: string; data: Record<string, string> }[]>(`SELECT name, data FROM events WHERE contact_id = $1 ORDER BY id`, [
      contactId,
    ]);

  it('a recipient suppressed after the email was queued is never handed to SMTP: SUPPRESSED, email.suppressed', async () => {
    const contactId = await insertContact(db, projectId, 'gone@example.net');
    const [withContact, transactional, other] = await queueEmails([
      { to: 'gone@example.net', contactId, type: 'MARKETING' },
      { to: 'GONE@Example.NET' },
      { to: 'stays@example.net' },
    ]);
    // Added after the emails were queued (a campaign already under way): still applies.
    await db.query(`INSERT INTO suppressions (project_id, email, reason, source) VALUES ($1, 'Gone@example.net', 'MANUAL', 'api')`, [
      projectId,
    ]);
    await startWorker();
    const rows = await waitForStatus(db, [withContact, transactional, other], ['SENT', 'FAILED', 'SUPPRESSED']);
    expect(rows.map((r) => r.status)).toEqual(['SUPPRESSED', 'SUPPRESSED', 'SENT']);
    expect(rows[0].error).toBe('recipient suppressed (MANUAL)');
    expect(sink.messagesFor([withContact, transactional])).toHaveLength(0);
    expect(sink.messagesFor([other])).toHaveLength(1);
    expect(await events(contactId)).toEqual([{ name: 'email.suppressed', data: { emailId: withContact, reason: 'MANUAL' } }]);
  }, 60_000);

  it('a hard bounce (550 5.1.1) suppresses the address (HARD_BOUNCE, smtp): the next email to it is SUPPRESSED', async () => {
    sink.answerWith((to) =>
      to.includes('nobody@example.net') ? { code: 550, message: '5.1.1 <nobody@example.net>: user unknown' } : null,
    );
    const contactId = await insertContact(db, projectId, 'nobody@example.net');
    const [first] = await queueEmails([{ to: 'nobody@example.net', contactId }]);
    await startWorker();
    const [row] = await waitForStatus(db, [first], ['FAILED', 'SENT']);
    expect(row.status).toBe('FAILED');
    expect(await suppressions('nobody@example.net')).toEqual([
      { reason: 'HARD_BOUNCE', source: 'smtp', detail: expect.stringMatching(/^SMTP 550: .*5\.1\.1 <nobody@example\.net>: user unknown/) },
    ]);
    expect((await events(contactId)).map((e) => e.name)).toEqual(['email.bounced']);
    const refusalsBefore = sink.refusals.length;
    const [second] = await queueEmails([{ to: 'Nobody@example.net', contactId }]);
    expect((await waitForStatus(db, [second], ['FAILED', 'SENT', 'SUPPRESSED']))[0].status).toBe('SUPPRESSED');
    expect(sink.refusals.length).toBe(refusalsBefore); // never offered to the relay again
  }, 60_000);

  it('a soft bounce (452 4.2.2) is retried on the MAIL_SOFT_BOUNCE_DELAYS_MS schedule, then FAILED, never suppressed', async () => {
    sink.answerWith((to) => (to.includes('full@example.net') ? { code: 452, message: '4.2.2 mailbox full' } : null));
    const [id] = await queueEmails([{ to: 'full@example.net' }]);
    await startWorker({ softBounceDelaysMs: [300, 600] });
    const [row] = await waitForStatus(db, [id], ['FAILED', 'SENT']);
    const tries = sink.refusals.filter((r) => r.to?.includes('full@example.net'));
    expect(tries).toHaveLength(3); // the first try and one per delay
    expect(tries[1].at - tries[0].at).toBeGreaterThanOrEqual(300);
    expect(tries[2].at - tries[1].at).toBeGreaterThanOrEqual(600);
    expect(row.status).toBe('FAILED');
    expect(row.error).toMatch(/SMTP 452: .*4\.2\.2 mailbox full.*still refused after 2 retries/);
    expect(await suppressions('full@example.net')).toEqual([]);
    const [{ bounced_at }] = await db.query<{ bounced_at: Date | null }[]>(`SELECT bounced_at FROM emails WHERE id = $1`, [id]);
    expect(bounced_at).toBeNull();
  }, 60_000);

  it('a soft bounce that clears is delivered once', async () => {
    let refused = 0;
    sink.answerWith((to) => (to.includes('later@example.net') && refused++ < 1 ? { code: 451, message: '4.7.1 greylisted' } : null));
    const [id] = await queueEmails([{ to: 'later@example.net' }]);
    await startWorker({ softBounceDelaysMs: [200] });
    const [row] = await waitForStatus(db, [id], ['FAILED', 'SENT']);
    expect(row.status).toBe('SENT');
    expect(sink.messagesFor([id])).toHaveLength(1);
  }, 60_000);

  it('relay throttling (454) returns the email untouched and pauses every worker through Redis, doubling while it repeats', async () => {
    let throttled = 0;
    sink.answerWith((to) =>
      to.includes('busy@example.net') && throttled++ < 2
        ? { code: 454, message: 'Throttling failure: Maximum sending rate exceeded.' }
        : null,
    );
    const [id] = await queueEmails([{ to: 'busy@example.net' }]);
    const w = await startWorker({ throttleBackoffMs: 400 });
    const [row] = await waitForStatus(db, [id], ['FAILED', 'SENT']);
    expect(row.status).toBe('SENT');
    expect(row.attempts).toBe(1); // the throttled claims were given back
    expect(sink.messagesFor([id])).toHaveLength(1);
    const [a, b] = sink.refusals.filter((r) => r.to?.includes('busy@example.net'));
    const delivered = sink.messagesFor([id])[0].receivedAt;
    expect(b.at - a.at).toBeGreaterThanOrEqual(400); // first pause
    expect(delivered - b.at).toBeGreaterThanOrEqual(800); // doubled
    const [{ bounced_at, soft_bounces }] = await db.query(`SELECT bounced_at, soft_bounces FROM emails WHERE id = $1`, [id]);
    expect({ bounced_at, soft_bounces }).toEqual({ bounced_at: null, soft_bounces: 0 });
    expect(await suppressions('busy@example.net')).toEqual([]);
    const pause = await w.get<Redis>(REDIS).get(`${t.config.queuePrefix}:mail:relay-pause`);
    expect(pause).toMatch(/^\d+:800$/);
  }, 60_000);

  it('the contracts name every status the emails table may hold (MailEmailStatus = the check constraint)', async () => {
    const [{ definition }] = await db.query<{ definition: string }[]>(
      `SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conname = 'emails_status_check'`,
    );
    const allowed = [...definition.matchAll(/'([A-Z]+)'/g)].map((m) => m[1]);
    expect([...allowed].sort()).toEqual([...MAIL_EMAIL_STATUSES].sort());
  });

  it('recognises throttling replies by code and by text', () => {
    expect(isThrottling({ responseCode: 421, response: '421 4.7.0 Try again later' })).toBe(true);
    expect(isThrottling({ responseCode: 454, response: '454 Throttling failure: Maximum sending rate exceeded.' })).toBe(true);
    expect(isThrottling({ responseCode: 451, response: '451 4.7.1 sending rate exceeded, slow down' })).toBe(true);
    expect(isThrottling({ responseCode: 550, response: '550 5.1.1 user unknown' })).toBe(false);
    expect(isThrottling({ responseCode: 452, response: '452 4.2.2 mailbox full' })).toBe(false);
    expect(isThrottling(new Error('connect ECONNREFUSED'))).toBe(false);
  });

  it('headers: Auto-Submitted on every email, Precedence: bulk on marketing, DKIM h= covers the required headers', async () => {
    const contactId = await insertContact(db, projectId, 'reader@example.net');
    const [transactional, marketing] = await queueEmails([
      { to: 'tx@example.net', headers: { 'Auto-Submitted': 'no', Precedence: 'list' } },
      { to: 'reader@example.net', contactId, type: 'MARKETING' },
    ]);
    await startWorker();
    await waitForStatus(db, [transactional, marketing], ['SENT']);
    const [tx] = sink.messagesFor([transactional]);
    const [mk] = sink.messagesFor([marketing]);
    const header = (raw: Buffer, name: string) =>
      raw
        .toString('latin1')
        .split('\r\n\r\n')[0]
        .replace(/\r\n[ \t]+/g, ' ')
        .split('\r\n')
        .filter((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
    expect(header(tx.raw, 'Auto-Submitted')).toEqual(['Auto-Submitted: auto-generated']);
    expect(header(tx.raw, 'Precedence')).toEqual([]);
    expect(header(mk.raw, 'Auto-Submitted')).toEqual(['Auto-Submitted: auto-generated']);
    expect(header(mk.raw, 'Precedence')).toEqual(['Precedence: bulk']);
    const [signature] = header(mk.raw, 'DKIM-Signature');
    const signed = /\bh=([^;]+)/.exec(signature)![1].replace(/\s+/g, '').toLowerCase().split(':');
    expect(signed).toEqual(
      expect.arrayContaining(['from', 'to', 'subject', 'date', 'message-id', 'list-unsubscribe', 'list-unsubscribe-post']),
    );
    expect((await dkimVerify(mk.raw, { resolver: dkimResolver(sender.domain) })).results[0].status.result).toBe('pass');
  }, 60_000);

  it('with MAIL_BOUNCE_DOMAIN the envelope sender is a VERP address naming the email, unforgeable', async () => {
    const [id] = await queueEmails([{ to: 'verp@example.net' }]);
    const w = await startWorker({ bounceDomain: 'bounces.example.com' });
    await waitForStatus(db, [id], ['SENT']);
    const [message] = sink.messagesFor([id]);
    expect(message.envelope.from).toMatch(/^bounces\+[0-9a-f]{52}@bounces\.example\.com$/);
    const verp = w.get(Verp);
    expect(verp.emailIdOf(message.envelope.from)).toBe(id);
    expect(verp.emailIdOf(message.envelope.from.toUpperCase().replace('BOUNCES.EXAMPLE.COM', 'bounces.example.com'))).toBe(id);
    const forged = message.envelope.from.replace(/([0-9a-f])@/, (_m, c: string) => `${c === '0' ? '1' : '0'}@`);
    expect(verp.emailIdOf(forged)).toBeNull();
    expect(verp.emailIdOf(message.envelope.from.replace('bounces.example.com', 'elsewhere.example.com'))).toBeNull();
  }, 60_000);
});
