import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { simpleParser } from 'mailparser';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { type MailProjectCredentials } from '@app/contracts';
import { listen } from '@app/service-kit';
import { startInProcessWorker } from '@app/service-kit/testing';
import type { MailConfig } from '../src/config/mail-config.js';
import { createMailHttpApp } from '../src/http-setup.js';
import { EMAIL_QUEUE, EmailDeliveryQueue, MailEmailPriority } from '../src/modules/delivery/email-delivery.queue.js';
import { ProjectsService } from '../src/modules/projects/projects.service.js';
import { WorkerModule } from '../src/worker.module.js';
import { insertEmails, insertVerifiedDomain, waitForStatus } from './support/delivery-fixtures.js';
import { bearer, createProject, expectMailError, expectValidationError } from './support/mail-api-helpers.js';
import { createMailTestEnv, startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';

const VERIFIED = 'signed.example.com';

/**
 * Issue #11 item 18: under a plain `npm start` (no MAIL_SMTP_URL, NODE_ENV not production) nobody
 * can verify a domain, so the platform's `no-reply@example.com` must still reach the outbox: unsigned,
 * with a header saying why. With SMTP, or in production, an unverified domain stays a 403.
 */
describe('unverified sender domains and the development outbox', () => {
  let outboxDir: string;
  let worker: INestApplicationContext | null = null;

  beforeAll(() => {
    outboxDir = mkdtempSync(path.join(os.tmpdir(), 'mail-dev-outbox-'));
  });
  afterEach(closeWorker);
  afterAll(() => {
    rmSync(outboxDir, { recursive: true, force: true });
  });

  async function closeWorker(): Promise<void> {
    await worker?.close();
    worker = null;
  }

  async function startWorker(config: MailConfig): Promise<void> {
    worker = await startInProcessWorker(WorkerModule.forRoot(config), { queues: [EMAIL_QUEUE] });
  }

  describe('outbox transport, outside production', () => {
    let t: MailTestApp;
    let p: MailProjectCredentials;
    beforeAll(async () => {
      t = await startMailApp({ env: { NODE_ENV: 'development', MAIL_OUTBOX_DIR: outboxDir } });
      p = await createProject(t, 'Zero config');
      await insertVerifiedDomain(t.app.get(DataSource), p.id, VERIFIED);
    });
    afterAll(async () => {
      await closeWorker();
      await t?.close();
    });
    const send = (body: object) => request(t.url).post('/v1/send').set(bearer(p.secretKey)).send(body);

    it('an unverified sender domain may send: the .eml is written unsigned and says why; a verified one is signed as before', async () => {
      const unsigned = await send({
        to: 'ada@example.net',
        from: 'no-reply@example.com',
        subject: 'Reset',
        body: '<p>Your link</p>',
      }).expect(200);
      const signed = await send({ to: 'ada@example.net', from: `team@${VERIFIED}`, subject: 'Signed', body: '<p>Hi</p>' }).expect(200);
      const ids = [unsigned.body.data.emails[0].email, signed.body.data.emails[0].email];
      await startWorker(t.config);
      const rows = await waitForStatus(t.app.get(DataSource), ids, ['SENT', 'FAILED']);
      expect(rows.map((r) => r.status)).toEqual(['SENT', 'SENT']);

      const [plain, dkim] = await Promise.all(ids.map((id) => simpleParser(readFileSync(path.join(outboxDir, `${id}.eml`)))));
      expect(plain.headers.get('x-mail-api-unsigned')).toBe('sender domain example.com is not verified (outbox transport, development)');
      expect(plain.headers.has('dkim-signature')).toBe(false);
      expect(plain).toMatchObject({ subject: 'Reset', html: '<p>Your link</p>', messageId: `<${ids[0]}@example.com>` });
      expect(plain.from?.value).toEqual([{ address: 'no-reply@example.com', name: '' }]);
      expect(dkim.headers.has('dkim-signature')).toBe(true);
      expect(dkim.headers.has('x-mail-api-unsigned')).toBe(false);
    });

    it('a sender cannot set X-Mail-Api-Unsigned itself', async () => {
      const res = await send({
        to: 'ada@example.net',
        from: `team@${VERIFIED}`,
        subject: 's',
        body: 'b',
        headers: { 'X-Mail-Api-Unsigned': 'trust me' },
      });
      expectValidationError(res, [{ field: 'headers.X-Mail-Api-Unsigned', code: 'isReservedHeader' }]);
    });
  });

  describe('the rule stays', () => {
    let sink: SmtpSink;
    beforeAll(async () => {
      sink = await startSmtpSink();
    });
    afterAll(async () => {
      await sink?.close();
    });

    it('with SMTP: 403 DOMAIN_NOT_VERIFIED at request time, FAILED in the worker', async () => {
      const t = await startMailApp({ env: { NODE_ENV: 'development', MAIL_SMTP_URL: sink.url } });
      try {
        const p = await createProject(t);
        const res = await request(t.url)
          .post('/v1/send')
          .set(bearer(p.secretKey))
          .send({ to: 'a@example.net', from: 'no-reply@example.com', subject: 's', body: 'b' });
        expectMailError(res, 403, 'DOMAIN_NOT_VERIFIED', /^sender domain example\.com is not verified/);
        await expectWorkerRefuses(t.app, p.id, t.config);
        expect(sink.messages).toHaveLength(0);
      } finally {
        await closeWorker();
        await t.close();
      }
    });

    it('in production with the outbox transport: 403 at request time, FAILED in the worker, no file', async () => {
      const dir = path.join(outboxDir, 'production');
      // The production switch alone (the config's other production requirements are not under test here).
      const testEnv = await createMailTestEnv({ MAIL_OUTBOX_DIR: dir });
      const config: MailConfig = { ...testEnv.config, env: 'production' };
      const app = await createMailHttpApp(config);
      try {
        const url = await listen(app, 0, '127.0.0.1');
        const p = await app.get(ProjectsService).create('Production');
        const res = await request(url)
          .post('/v1/send')
          .set(bearer(p.secretKey))
          .send({ to: 'a@example.net', from: 'no-reply@example.com', subject: 's', body: 'b' });
        expectMailError(res, 403, 'DOMAIN_NOT_VERIFIED', /^sender domain example\.com is not verified/);
        const id = await expectWorkerRefuses(app, p.id, config);
        expect(() => readFileSync(path.join(dir, `${id}.eml`))).toThrow(/ENOENT/);
      } finally {
        await closeWorker();
        await app.close();
        await testEnv.cleanup();
      }
    });

    /** A row queued from an unverified domain (as if written before the rule applied) is FAILED, never sent. */
    async function expectWorkerRefuses(app: INestApplicationContext, projectId: string, config: MailConfig): Promise<string> {
      const db = app.get(DataSource);
      const [id] = await insertEmails(db, projectId, [{ from: 'no-reply@example.com' }]);
      await app.get(EmailDeliveryQueue).enqueue([{ id, projectId, priority: MailEmailPriority.Transactional }]);
      await startWorker(config);
      const [row] = await waitForStatus(db, [id], ['SENT', 'FAILED']);
      expect(row).toMatchObject({
        status: 'FAILED',
        error: expect.stringMatching(/no verified domain for the from address no-reply@example\.com/),
      });
      return id;
    }
  });
});
