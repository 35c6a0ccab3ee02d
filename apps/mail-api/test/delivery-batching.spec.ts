import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { WorkerRunner } from '@app/service-kit';
import { projectScope } from '../src/core/scope/project-scope.js';
import { EmailDeliveryBatcher } from '../src/modules/delivery/email-delivery-batcher.js';
import { EMAIL_QUEUE, EmailDeliveryQueue, MailEmailPriority } from '../src/modules/delivery/email-delivery.queue.js';
import { WorkerModule } from '../src/worker.module.js';
import { emailRows, insertContact, insertEmails, insertVerifiedDomain, waitForStatus } from './support/delivery-fixtures.js';
import { createProject } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';

const DOMAIN = 'batch.example.com';
const OTHER_DOMAIN = 'batch-other.example.com';

/**
 * The worker's claim and SENT statements are shared by the jobs running at the same time
 * (EmailDeliveryBatcher). Each email must still be claimed, sent and recorded exactly once, by its
 * own project, whatever else is in its batch.
 */
describe('email delivery: batched claims and outcomes', () => {
  let t: MailTestApp;
  let sink: SmtpSink;
  let db: DataSource;
  let projectA: string;
  let projectB: string;
  let worker: INestApplicationContext;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startMailApp({ env: { MAIL_SMTP_URL: sink.url, MAIL_PUBLIC_URL: 'https://mail.test' } });
    db = t.app.get(DataSource);
    projectA = (await createProject(t)).id;
    projectB = (await createProject(t)).id;
    await insertVerifiedDomain(db, projectA, DOMAIN);
    await insertVerifiedDomain(db, projectB, OTHER_DOMAIN);
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot({ ...t.config, ratePerSecond: 10_000, sendConcurrency: 32 }), {
      logger: false,
    });
  });
  afterAll(async () => {
    await worker?.close();
    await t?.close();
    await sink?.close();
  });

  const batcher = () => worker.get(EmailDeliveryBatcher);
  const fixtures = (n: number, tag: string) =>
    Array.from({ length: n }, (_, i) => ({ to: `${tag}-${i}@example.net`, subject: `${tag} ${i}` }));

  it('claims of one email in the same batch: one wins, as they would one by one; another project never claims it', async () => {
    const [id] = await insertEmails(db, projectA, fixtures(1, 'dup'), { from: `news@${DOMAIN}` });
    const [a, b, other] = await Promise.all([
      batcher().claim(projectScope(projectA), { emailId: id, lockSeconds: 60 }),
      batcher().claim(projectScope(projectA), { emailId: id, lockSeconds: 60 }),
      batcher().claim(projectScope(projectB), { emailId: id, lockSeconds: 60 }),
    ]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
    expect(other).toBeNull();
    const claimed = (a ?? b)!;
    expect(claimed).toMatchObject({ id, projectId: projectA, attempts: 1, dkim: { domainName: DOMAIN } });
    expect((await emailRows(db, [id]))[0]).toMatchObject({ status: 'SENDING', attempts: 1 });

    const sent = await Promise.all([
      batcher().markSent(projectScope(projectA), { email: claimed, providerMessageId: '250 first' }),
      batcher().markSent(projectScope(projectA), { email: claimed, providerMessageId: '250 second' }),
    ]);
    expect(sent.filter(Boolean)).toHaveLength(1);
    expect((await emailRows(db, [id]))[0]).toMatchObject({ status: 'SENT', provider_message_id: '250 first', claimed_until: null });
  });

  it('a SENT batch records one email.sent per campaign email, none for a duplicate call or a transactional email in it', async () => {
    const contactId = await insertContact(db, projectA, 'batch-event@example.net');
    const [{ id: campaignId }] = await db.query<{ id: string }[]>(
      `INSERT INTO campaigns (project_id, name, subject, body, from_email, audience_type, status)
       VALUES ($1, 'Batch', 'S', 'B', $2, 'ALL', 'SENDING') RETURNING id`,
      [projectA, `news@${DOMAIN}`],
    );
    const [campaignEmail] = await insertEmails(
      db,
      projectA,
      [{ to: 'batch-event@example.net', type: 'MARKETING', contactId, campaignId }],
      {
        from: `news@${DOMAIN}`,
      },
    );
    const [transactional] = await insertEmails(db, projectA, fixtures(1, 'batch-event-tx'), { from: `news@${DOMAIN}` });
    const scope = projectScope(projectA);
    const [a, b] = await Promise.all([campaignEmail, transactional].map((emailId) => batcher().claim(scope, { emailId, lockSeconds: 60 })));
    // One batch: the campaign email twice (a duplicate job) beside the transactional one.
    const sent = await Promise.all([
      batcher().markSent(scope, { email: a!, providerMessageId: '250 a' }),
      batcher().markSent(scope, { email: a!, providerMessageId: '250 a again' }),
      batcher().markSent(scope, { email: b!, providerMessageId: '250 b' }),
    ]);
    expect(sent).toEqual([true, false, true]);
    const events = await db.query<{ name: string; emailId: string }[]>(
      `SELECT name, data->>'emailId' AS "emailId" FROM events WHERE project_id = $1 AND name = 'email.sent' AND contact_id = $2`,
      [projectA, contactId],
    );
    expect(events).toEqual([{ name: 'email.sent', emailId: campaignEmail }]);
    expect((await emailRows(db, [campaignEmail, transactional])).map((r) => r.status)).toEqual(['SENT', 'SENT']);
  });

  it('a batch whose statement fails runs its calls one by one: the others are not failed with it', async () => {
    const ids = await insertEmails(db, projectA, fixtures(3, 'fallback'), { from: `news@${DOMAIN}` });
    // The batch statement fails once (on the second email); alone, each claim succeeds.
    await db.query(`CREATE SEQUENCE claim_fail_once`);
    await db.query(`
      CREATE FUNCTION fail_claim_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.id = '${ids[1]}' AND NEW.status = 'SENDING' AND nextval('claim_fail_once') = 1 THEN RAISE EXCEPTION 'injected'; END IF;
        RETURN NEW;
      END $$`);
    await db.query(`CREATE TRIGGER fail_claim_once BEFORE UPDATE ON emails FOR EACH ROW EXECUTE FUNCTION fail_claim_once()`);
    try {
      const claimed = await Promise.all(ids.map((emailId) => batcher().claim(projectScope(projectA), { emailId, lockSeconds: 60 })));
      expect(claimed.map((e) => e?.id)).toEqual(ids);
      expect((await db.query(`SELECT is_called FROM claim_fail_once`))[0].is_called).toBe(true);
      expect((await emailRows(db, ids)).map((r) => [r.status, r.attempts])).toEqual(ids.map(() => ['SENDING', 1]));
    } finally {
      await db.query(`DROP TRIGGER fail_claim_once ON emails`);
      await db.query(`DROP FUNCTION fail_claim_once(); DROP SEQUENCE claim_fail_once`);
    }
  });

  it('a worker delivers many emails of two projects at once: each SENT once, each message once at the relay, signed by its own domain', async () => {
    const a = await insertEmails(db, projectA, fixtures(40, 'a'), { from: `news@${DOMAIN}` });
    const b = await insertEmails(db, projectB, fixtures(40, 'b'), { from: `news@${OTHER_DOMAIN}` });
    const queue = t.app.get(EmailDeliveryQueue);
    await queue.enqueue([
      ...a.map((id) => ({ id, projectId: projectA, priority: MailEmailPriority.Transactional })),
      ...b.map((id) => ({ id, projectId: projectB, priority: MailEmailPriority.Transactional })),
    ]);
    await worker.get(WorkerRunner).start({ queues: [EMAIL_QUEUE] });
    const rows = await waitForStatus(db, [...a, ...b], ['SENT'], 30_000);
    expect(rows.every((r) => r.attempts === 1 && r.provider_message_id)).toBe(true);
    const messages = sink.messagesFor([...a, ...b]);
    expect(messages).toHaveLength(80);
    expect(new Set(messages.map((m) => m.messageId)).size).toBe(80);
    for (const m of messages) {
      const domain = a.some((id) => m.messageId === `<${id}@${DOMAIN}>`) ? DOMAIN : OTHER_DOMAIN;
      expect(m.raw.toString('latin1')).toMatch(new RegExp(`DKIM-Signature:[^]*d=${domain.replaceAll('.', '\\.')};`));
    }
  });
});
