import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import nodemailer from 'nodemailer';
import { DataSource } from 'typeorm';
import { WorkerRunner } from '@app/service-kit';
import type { MailConfig } from '../src/config/mail-config.js';
import { readDeliveryReport } from '../src/modules/bounces/delivery-reports.js';
import { InboundSmtpService } from '../src/modules/bounces/inbound-smtp.service.js';
import { EMAIL_QUEUE, EmailDeliveryQueue, MailEmailPriority } from '../src/modules/delivery/email-delivery.queue.js';
import { WorkerModule } from '../src/worker.module.js';
import { insertContact, insertEmails, insertVerifiedDomain, waitForStatus } from './support/delivery-fixtures.js';
import { createProject } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';

const DOMAIN = 'news.example.com';
const BOUNCE_DOMAIN = 'bounces.example.com';
const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'reports');

/** A report fixture for one sent email, with CRLF line ends as on the wire. */
function fixture(name: string, vars: { verp: string; rcpt: string; emailId: string }): Buffer {
  const text = readFileSync(path.join(FIXTURES, name), 'utf8')
    .replaceAll('{{VERP}}', vars.verp)
    .replaceAll('{{RCPT}}', vars.rcpt)
    .replaceAll('{{EMAIL_ID}}', vars.emailId);
  return Buffer.from(text.replace(/\r?\n/g, '\r\n'));
}

describe('asynchronous bounces and complaints: VERP and the inbound SMTP listener (real SMTP both ways)', () => {
  let t: MailTestApp;
  let sink: SmtpSink;
  let db: DataSource;
  let projectId: string;
  let worker: INestApplicationContext;
  let listenerPort: number;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startMailApp({ env: { MAIL_SMTP_URL: sink.url, MAIL_BOUNCE_DOMAIN: BOUNCE_DOMAIN, MAIL_INBOUND_SMTP_PORT: '0' } });
    db = t.app.get(DataSource);
    projectId = (await createProject(t)).id;
    await insertVerifiedDomain(db, projectId, DOMAIN);
    const config: MailConfig = t.config;
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { logger: false });
    await worker.get(WorkerRunner).start({ queues: [EMAIL_QUEUE] });
    listenerPort = worker.get(InboundSmtpService).port!;
  });
  afterAll(async () => {
    await worker?.close();
    await t?.close();
    await sink?.close();
  });

  /** Sends one email to a new contact and answers it once SENT, with the VERP address the relay saw. */
  async function sent(address: string): Promise<{ emailId: string; contactId: string; verp: string }> {
    const contactId = await insertContact(db, projectId, address);
    const [emailId] = await insertEmails(db, projectId, [{ to: address, contactId, type: 'MARKETING' }], { from: `hello@${DOMAIN}` });
    await t.app.get(EmailDeliveryQueue).enqueue([{ id: emailId, projectId, priority: MailEmailPriority.Campaign }]);
    await waitForStatus(db, [emailId], ['SENT']);
    const [message] = sink.messagesFor([emailId]);
    return { emailId, contactId, verp: message.envelope.from };
  }

  /** Delivers a raw message to the listener as a remote MTA would (null sender). */
  function report(to: string, raw: Buffer): Promise<unknown> {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: listenerPort, secure: false, ignoreTLS: true });
    return transport.sendMail({ envelope: { from: '', to }, raw }).finally(() => transport.close());
  }

  const state = async (emailId: string, contactId: string, address: string) => {
    const [email] = await db.query(
      `SELECT status, bounced_at IS NOT NULL AS bounced, complained_at IS NOT NULL AS complained FROM emails WHERE id = $1`,
      [emailId],
    );
    const [contact] = await db.query(`SELECT subscribed FROM contacts WHERE id = $1`, [contactId]);
    const events = await db.query(`SELECT name FROM events WHERE contact_id = $1 ORDER BY id`, [contactId]);
    const suppressions = await db.query(`SELECT reason, source, detail FROM suppressions WHERE project_id = $1 AND lower(email) = $2`, [
      projectId,
      address,
    ]);
    return { email, subscribed: contact.subscribed, events: events.map((e: { name: string }) => e.name), suppressions };
  };

  it('listens only with MAIL_BOUNCE_DOMAIN set, on the configured port', () => {
    expect(listenerPort).toBeGreaterThan(0);
  });

  it('a Postfix DSN (5.1.1 failed) marks the email BOUNCED, records email.bounced, suppresses (dsn); the same report twice is processed once', async () => {
    const address = 'unknown-user@example.net';
    const s = await sent(address);
    const raw = fixture('postfix-dsn-5.1.1.eml', { verp: s.verp, rcpt: address, emailId: s.emailId });
    await report(s.verp, raw);
    await report(s.verp, raw);
    expect(await state(s.emailId, s.contactId, address)).toEqual({
      email: { status: 'BOUNCED', bounced: true, complained: false },
      subscribed: true,
      events: ['email.bounced'],
      suppressions: [
        { reason: 'HARD_BOUNCE', source: 'dsn', detail: expect.stringMatching(/^Status: 5\.1\.1; Diagnostic-Code: smtp; 550 5\.1\.1/) },
      ],
    });
  }, 60_000);

  it('an Amazon SES DSN is read the same way', async () => {
    const address = 'ses-bounce@example.net';
    const s = await sent(address);
    await report(s.verp, fixture('ses-dsn-5.1.1.eml', { verp: s.verp, rcpt: address, emailId: s.emailId }));
    const after = await state(s.emailId, s.contactId, address);
    expect(after.email.status).toBe('BOUNCED');
    expect(after.suppressions).toEqual([
      { reason: 'HARD_BOUNCE', source: 'dsn', detail: 'Status: 5.1.1; Diagnostic-Code: smtp; 550 5.1.1 user unknown' },
    ]);
  }, 60_000);

  it('a delayed (4.4.1) DSN changes nothing', async () => {
    const address = 'slow-mx@example.net';
    const s = await sent(address);
    await report(s.verp, fixture('postfix-dsn-delayed-4.4.1.eml', { verp: s.verp, rcpt: address, emailId: s.emailId }));
    expect(await state(s.emailId, s.contactId, address)).toEqual({
      email: { status: 'SENT', bounced: false, complained: false },
      subscribed: true,
      events: [],
      suppressions: [],
    });
  }, 60_000);

  it('an ARF abuse report records email.complained, unsubscribes the contact, suppresses (COMPLAINT, arf); twice is once', async () => {
    const address = 'angry@example.net';
    const s = await sent(address);
    const raw = fixture('ses-arf-abuse.eml', { verp: s.verp, rcpt: address, emailId: s.emailId });
    await report(s.verp, raw);
    await report(s.verp, raw);
    expect(await state(s.emailId, s.contactId, address)).toEqual({
      email: { status: 'SENT', bounced: false, complained: true },
      subscribed: false,
      events: ['email.complained'],
      suppressions: [{ reason: 'COMPLAINT', source: 'arf', detail: 'Feedback-Type: abuse' }],
    });
  }, 60_000);

  it('forged, guessed and foreign recipient addresses are refused at RCPT with 550', async () => {
    const s = await sent('target@example.net');
    const raw = fixture('postfix-dsn-5.1.1.eml', { verp: s.verp, rcpt: 'target@example.net', emailId: s.emailId });
    const flip = (c: string) => (c === '0' ? '1' : '0');
    const forged = s.verp.replace(/^(bounces\+)(.)/, (_m, p: string, c: string) => `${p}${flip(c)}`);
    for (const to of [
      forged,
      `bounces+${'0'.repeat(52)}@${BOUNCE_DOMAIN}`,
      s.verp.replace(BOUNCE_DOMAIN, 'elsewhere.example'),
      `postmaster@${BOUNCE_DOMAIN}`,
    ]) {
      await expect(report(to, raw)).rejects.toMatchObject({ responseCode: 550 });
    }
    expect((await state(s.emailId, s.contactId, 'target@example.net')).email.status).toBe('SENT');
  }, 60_000);

  it('refuses a report over 1 MB (552)', async () => {
    const s = await sent('big@example.net');
    const raw = Buffer.concat([
      fixture('postfix-dsn-5.1.1.eml', { verp: s.verp, rcpt: 'big@example.net', emailId: s.emailId }),
      Buffer.from(`${'x'.repeat(998)}\r\n`.repeat(1100)),
    ]);
    await expect(report(s.verp, raw)).rejects.toMatchObject({ responseCode: 552 });
  }, 60_000);

  it('reads the reports without the listener: hard bounce, delay, complaint, not a report', async () => {
    const vars = { verp: 'bounces+x@b.example', rcpt: 'r@example.net', emailId: 'id' };
    expect(await readDeliveryReport(fixture('postfix-dsn-5.1.1.eml', vars))).toMatchObject({ kind: 'hard-bounce' });
    expect(await readDeliveryReport(fixture('ses-dsn-5.1.1.eml', vars))).toMatchObject({ kind: 'hard-bounce' });
    expect(await readDeliveryReport(fixture('postfix-dsn-delayed-4.4.1.eml', vars))).toEqual({
      kind: 'ignored',
      why: 'action delayed status 4.4.1',
    });
    expect(await readDeliveryReport(fixture('ses-arf-abuse.eml', vars))).toEqual({ kind: 'complaint', detail: 'Feedback-Type: abuse' });
    const plain = Buffer.from('From: a@example.net\r\nSubject: out of office\r\n\r\nI am away.\r\n');
    expect(await readDeliveryReport(plain)).toEqual({ kind: 'ignored', why: 'not a multipart/report' });
  });
});
