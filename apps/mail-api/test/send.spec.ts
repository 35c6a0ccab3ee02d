import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { dkimVerify } from 'mailauth';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { type MailDomain, type MailProjectCredentials } from '@app/contracts';
import { QueueService } from '@app/service-kit';
import { startInProcessWorker } from '@app/service-kit/testing';
import { EMAIL_QUEUE } from '../src/modules/delivery/email-delivery.queue.js';
import { SendJobs } from '../src/modules/send/send.jobs.js';
import { WorkerModule } from '../src/worker.module.js';
import { waitForQueuesDrained, waitForStatus } from './support/delivery-fixtures.js';
import { startDnsTestServer, type DnsTestServer } from './support/dns-test-server.js';
import { bearer, createProject, expectMailError, expectValidationError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';
import { addVerifiedDomain } from './support/verified-domain.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DOMAIN = 'send.example.com';

describe('POST /v1/send', () => {
  let t: MailTestApp;
  let dns: DnsTestServer;
  let sink: SmtpSink;
  let db: DataSource;
  let p: MailProjectCredentials;
  let auth: Record<string, string>;
  let domain: MailDomain;
  let worker: INestApplicationContext | null = null;

  beforeAll(async () => {
    dns = await startDnsTestServer({});
    sink = await startSmtpSink();
    // The rate is not under test here: a high one lets a worker drain the earlier tests' emails at once.
    t = await startMailApp({
      env: { MAIL_DNS_SERVERS: dns.address, MAIL_SMTP_URL: sink.url, MAIL_PUBLIC_URL: 'https://mail.test', MAIL_RATE_PER_SECOND: '1000' },
    });
    db = t.app.get(DataSource);
    p = await createProject(t, 'Send');
    auth = bearer(p.secretKey);
    domain = await addVerifiedDomain(t, dns, p.secretKey, DOMAIN);
  });
  afterEach(async () => {
    await worker?.close();
    worker = null;
  });
  afterAll(async () => {
    await t?.close();
    await sink?.close();
    await dns?.close();
  });

  async function startWorker(): Promise<void> {
    worker = await startInProcessWorker(WorkerModule.forRoot(t.config), { queues: [EMAIL_QUEUE] });
  }

  const send = (body: object, headers: Record<string, string> = {}) => request(t.url).post('/v1/send').set(auth).set(headers).send(body);
  const emailRowsOf = (ids: string[]) =>
    db.query(
      `SELECT id, status, to_email, to_name, from_email, from_name, reply_to, subject, html, type, template_id, contact_id
                FROM emails WHERE id = ANY($1::uuid[]) ORDER BY array_position($1::uuid[], id)`,
      [ids],
    );
  const resolver = (name: string) => {
    const record = domain.records.find((r) => r.name === name);
    if (record) return Promise.resolve([record.value.match(/.{1,250}/g)]);
    return Promise.reject(Object.assign(new Error(`no TXT for ${name}`), { code: 'ENOTFOUND' }));
  };

  describe('accepting a send', () => {
    it('answers {success, data: {emails, timestamp}} with one queued email per distinct recipient, in every `to` form', async () => {
      const res = await send({
        to: ['first@example.net', { name: 'Second Person', email: 'second@example.net' }, 'FIRST@example.net'],
        from: `hello@${DOMAIN}`,
        subject: 'Hi',
        body: '<p>Hi</p>',
      }).expect(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          emails: [
            { contact: { id: expect.stringMatching(UUID), email: 'first@example.net' }, email: expect.stringMatching(UUID) },
            { contact: { id: expect.stringMatching(UUID), email: 'second@example.net' }, email: expect.stringMatching(UUID) },
          ],
          timestamp: expect.stringMatching(ISO),
        },
      });
      const ids = res.body.data.emails.map((e: { email: string }) => e.email);
      const rows = await emailRowsOf(ids);
      expect(rows).toEqual([
        expect.objectContaining({
          status: 'QUEUED',
          to_email: 'first@example.net',
          to_name: null,
          from_email: `hello@${DOMAIN}`,
          type: 'TRANSACTIONAL',
        }),
        expect.objectContaining({
          status: 'QUEUED',
          to_email: 'second@example.net',
          to_name: 'Second Person',
          contact_id: res.body.data.emails[1].contact.id,
        }),
      ]);
    });

    it('creates new recipients as unsubscribed contacts, keeps existing contacts as they are, and `subscribed` sets both', async () => {
      await request(t.url).post('/contacts').set(auth).send({ email: 'known@example.net', subscribed: true }).expect(201);
      const res = await send({ to: ['known@example.net', 'new-one@example.net'], from: `hello@${DOMAIN}`, subject: 's', body: 'b' }).expect(
        200,
      );
      const [known, fresh] = res.body.data.emails.map((e: { contact: { id: string } }) => e.contact.id);
      expect((await request(t.url).get(`/contacts/${known}`).set(auth).expect(200)).body.subscribed).toBe(true);
      expect((await request(t.url).get(`/contacts/${fresh}`).set(auth).expect(200)).body).toMatchObject({
        email: 'new-one@example.net',
        subscribed: false,
      });

      const opted = await send({
        to: ['new-one@example.net', 'opted@example.net'],
        from: `hello@${DOMAIN}`,
        subject: 's',
        body: 'b',
        subscribed: true,
      }).expect(200);
      for (const e of opted.body.data.emails) {
        expect((await request(t.url).get(`/contacts/${e.contact.id}`).set(auth).expect(200)).body.subscribed).toBe(true);
      }
      expect(opted.body.data.emails[0].contact.id).toBe(fresh);
    });
  });

  describe('delivery of what was sent', () => {
    it('arrives substituted, with the sender name, reply-to, custom headers, attachments and a DKIM signature that verifies', async () => {
      const pdf = Buffer.from('%PDF-1.4 fake');
      const res = await send({
        to: { name: 'Ada Lovelace', email: 'ada@example.net' },
        from: { name: 'Ignored Name', email: `billing@${DOMAIN}` },
        name: 'Example Billing',
        reply: 'support@example.org',
        subject: 'Invoice {{ invoice.number }} for {{name}}',
        body: '<p>Dear {{name}}, total {{total}} for {{email}}. Plan: {{ plan ?? "basic" }}.{{missing}}</p><a href="{{unsubscribeUrl}}">unsubscribe</a>',
        data: { name: 'Ada <Countess>', total: 42.5, invoice: { number: 'INV-7' } },
        headers: { 'X-Campaign-Ref': 'ref 1' },
        attachments: [
          { filename: 'invoice.pdf', content: pdf.toString('base64'), contentType: 'application/pdf' },
          { filename: 'notes.txt', content: Buffer.from('hello').toString('base64') },
        ],
      }).expect(200);
      const [{ email: id, contact }] = res.body.data.emails;
      await startWorker();
      await waitForStatus(db, [id], ['SENT', 'FAILED']);
      expect((await emailRowsOf([id]))[0].status).toBe('SENT');

      const [message] = sink.messagesFor([id]);
      const parsed = await sink.parse(message);
      expect(parsed.subject).toBe('Invoice INV-7 for Ada <Countess>');
      expect(parsed.from?.value).toEqual([{ address: `billing@${DOMAIN}`, name: 'Example Billing' }]);
      expect(parsed.replyTo?.value).toEqual([{ address: 'support@example.org', name: '' }]);
      expect(parsed.headers.get('x-campaign-ref')).toBe('ref 1');
      expect(parsed.html).toContain('<p>Dear Ada &lt;Countess&gt;, total 42.5 for ada@example.net. Plan: basic.</p>');
      const unsubscribeUrl = /href="([^"]+)"/.exec(parsed.html as string)?.[1];
      expect(unsubscribeUrl).toMatch(/^https:\/\/mail\.test\/unsubscribe\/[A-Za-z0-9_-]+$/);
      expect(parsed.attachments.map((a) => [a.filename, a.contentType, a.content.toString()])).toEqual([
        ['invoice.pdf', 'application/pdf', pdf.toString()],
        ['notes.txt', 'text/plain', 'hello'],
      ]);
      const dkim = await dkimVerify(message.raw, { resolver: resolver as never });
      expect(dkim.results[0]).toMatchObject({ signingDomain: DOMAIN, status: { result: 'pass' } });

      // The link in a transactional email works too: it unsubscribes this contact.
      await request(t.url).post(new URL(unsubscribeUrl!).pathname).expect(200);
      expect((await request(t.url).get(`/contacts/${contact.id}`).set(auth).expect(200)).body.subscribed).toBe(false);
    }, 60_000);
  });

  describe('templates', () => {
    let templateId: string;
    beforeAll(async () => {
      const res = await request(t.url)
        .post('/templates')
        .set(auth)
        .send({
          name: 'Welcome',
          subject: 'Welcome, {{name}}',
          body: '<p>Hello {{name}} from the template</p>',
          from: `team@${DOMAIN}`,
          fromName: 'The Team',
          replyTo: 'help@example.org',
          type: 'MARKETING',
        })
        .expect(201);
      templateId = res.body.id;
    });

    it('a send with only `template`, `to` and `data` takes subject, body, from, sender name, reply-to and type from it', async () => {
      const res = await send({ template: templateId, to: 'tpl@example.net', data: { name: 'Grace' } }).expect(200);
      const [row] = await emailRowsOf([res.body.data.emails[0].email]);
      expect(row).toMatchObject({
        subject: 'Welcome, Grace',
        html: '<p>Hello Grace from the template</p>',
        from_email: `team@${DOMAIN}`,
        from_name: 'The Team',
        reply_to: 'help@example.org',
        type: 'MARKETING',
        template_id: templateId,
      });
    });

    it('explicit request fields override the template', async () => {
      const res = await send({
        template: templateId,
        to: 'tpl2@example.net',
        subject: 'Custom {{name}}',
        from: { name: 'Override', email: `other@${DOMAIN}` },
        reply: 'elsewhere@example.org',
        data: { name: 'Linus' },
      }).expect(200);
      const [row] = await emailRowsOf([res.body.data.emails[0].email]);
      expect(row).toMatchObject({
        subject: 'Custom Linus',
        html: '<p>Hello Linus from the template</p>',
        from_email: `other@${DOMAIN}`,
        from_name: 'Override',
        reply_to: 'elsewhere@example.org',
      });
    });

    it('an unknown template is a 404', async () => {
      const res = await send({ template: '0190a0a0-0000-7000-8000-000000000000', to: 'x@example.net' });
      expectMailError(res, 404, 'NOT_FOUND', 'template not found');
    });
  });

  describe('refusals', () => {
    it('403 DOMAIN_NOT_VERIFIED for a domain that is pending or not added at all, and nothing is written', async () => {
      await request(t.url).post('/domains').set(auth).send({ domain: 'pending.example.com' }).expect(201);
      const before = await db.query('SELECT count(*)::int AS n FROM emails');
      for (const from of ['news@pending.example.com', 'news@unknown.example.com', `news@sub.${DOMAIN}`]) {
        const res = await send({ to: 'x@example.net', from, subject: 's', body: 'b' });
        expectMailError(
          res,
          403,
          'DOMAIN_NOT_VERIFIED',
          new RegExp(`^sender domain ${from.split('@')[1].replace(/\./g, '\\.')} is not verified`),
        );
      }
      expect(await db.query('SELECT count(*)::int AS n FROM emails')).toEqual(before);
    });

    it('a public key is refused (403 SECRET_KEY_REQUIRED)', async () => {
      const res = await request(t.url)
        .post('/v1/send')
        .set(bearer(p.publicKey))
        .send({ to: 'x@example.net', from: `a@${DOMAIN}`, subject: 's', body: 'b' });
      expectMailError(res, 403, 'SECRET_KEY_REQUIRED', /requires the secret key/);
    });

    const base = { to: 'x@example.net', from: `a@${DOMAIN}`, subject: 's', body: 'b' };
    const cases: [string, object, { field: string; code: string }[]][] = [
      ['no to', { ...base, to: undefined }, [{ field: 'to', code: 'isDefined' }]],
      ['a bad address in a to list', { ...base, to: ['ok@example.net', 'not-an-email'] }, [{ field: 'to[1]', code: 'isEmail' }]],
      ['a bad {name, email}', { ...base, to: { name: 'X', email: 'nope' } }, [{ field: 'to.email', code: 'isEmail' }]],
      [
        'too many recipients',
        { ...base, to: Array.from({ length: 51 }, (_, i) => `r${i}@example.net`) },
        [{ field: 'to', code: 'arraySize' }],
      ],
      [
        'no subject, body or from without a template',
        { to: 'x@example.net' },
        [
          { field: 'from', code: 'isDefined' },
          { field: 'subject', code: 'isDefined' },
          { field: 'body', code: 'isDefined' },
        ],
      ],
      [
        'a CR/LF in a header value',
        { ...base, headers: { 'X-Evil': 'a\r\nBcc: victim@example.com' } },
        [{ field: 'headers.X-Evil', code: 'hasNoLineBreak' }],
      ],
      ['a structural header', { ...base, headers: { 'Message-ID': '<x@y>' } }, [{ field: 'headers.Message-ID', code: 'isReservedHeader' }]],
      ['an invalid header name', { ...base, headers: { 'Bad Name': 'v' } }, [{ field: 'headers.Bad Name', code: 'isHeaderName' }]],
      ['a bad reply address', { ...base, reply: 'nope' }, [{ field: 'reply', code: 'isEmail' }]],
      ['a subject with a line break', { ...base, subject: 'a\nb' }, [{ field: 'subject', code: 'matches' }]],
      [
        'eleven attachments',
        { ...base, attachments: Array.from({ length: 11 }, (_, i) => ({ filename: `f${i}.txt`, content: 'aGk=' })) },
        [{ field: 'attachments', code: 'arrayMaxSize' }],
      ],
      [
        'attachments over 10 MB in total',
        {
          ...base,
          attachments: [
            { filename: 'a.bin', content: Buffer.alloc(6 * 1024 * 1024).toString('base64') },
            { filename: 'b.bin', content: Buffer.alloc(5 * 1024 * 1024).toString('base64') },
          ],
        },
        [{ field: 'attachments', code: 'maxTotalSize' }],
      ],
      [
        'an attachment that is not base64',
        { ...base, attachments: [{ filename: 'a.txt', content: 'not base64!' }] },
        [{ field: 'attachments[0].content', code: 'isBase64' }],
      ],
      [
        'an attachment with an empty filename',
        { ...base, attachments: [{ filename: '', content: 'aGk=' }] },
        [{ field: 'attachments[0].filename', code: 'isNotEmpty' }],
      ],
    ];
    it.each(cases)('422 VALIDATION_ERROR for %s', async (_name, body, fields) => {
      expectValidationError(await send(body), fields);
    });

    it('exactly 10 MB of attachments in 10 files is accepted', async () => {
      const content = Buffer.alloc(1024 * 1024).toString('base64');
      const attachments = Array.from({ length: 10 }, (_, i) => ({ filename: `part${i}.bin`, content }));
      await send({ ...base, attachments }).expect(200);
    });

    it('a malformed Idempotency-Key is a 422', async () => {
      expectValidationError(await send(base, { 'Idempotency-Key': 'x'.repeat(256) }), [
        { field: 'Idempotency-Key', code: 'isIdempotencyKey' },
      ]);
    });
  });

  describe('Idempotency-Key', () => {
    const body = { to: ['idem-a@example.net', 'idem-b@example.net'], from: `a@${DOMAIN}`, subject: 'once', body: 'only once' };
    const countFor = async (subject: string) =>
      (await db.query('SELECT count(*)::int AS n FROM emails WHERE subject = $1', [subject]))[0].n;

    it('a replay returns the first answer and writes nothing; the worker delivers each email once', async () => {
      const first = await send(body, { 'Idempotency-Key': 'order-1' }).expect(200);
      const replay = await send(body, { 'Idempotency-Key': 'order-1' }).expect(200);
      expect(replay.body).toEqual(first.body);
      expect(await countFor('once')).toBe(2);
      const ids = first.body.data.emails.map((e: { email: string }) => e.email);
      await startWorker();
      await waitForStatus(db, ids, ['SENT']);
      await send(body, { 'Idempotency-Key': 'order-1' }).expect(200);
      // Whatever the replay could have queued has run (the worker drained the queue): then count.
      await waitForQueuesDrained([worker!.get(QueueService).queue(EMAIL_QUEUE)]);
      expect(sink.messages.filter((m) => ids.some((id: string) => m.messageId?.startsWith(`<${id}@`)))).toHaveLength(2);
      expect(await countFor('once')).toBe(2);
    }, 60_000);

    it('concurrent requests with one key send once and all get the same answer', async () => {
      const concurrent = { ...body, subject: 'concurrent once' };
      const answers = await Promise.all(Array.from({ length: 6 }, () => send(concurrent, { 'Idempotency-Key': 'order-2' })));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
      for (const a of answers) expect(a.body).toEqual(answers[0].body);
      expect(await countFor('concurrent once')).toBe(2);
    });

    it('the same key with a different body is a 409 IDEMPOTENCY_CONFLICT', async () => {
      await send({ ...body, subject: 'first body' }, { 'Idempotency-Key': 'order-3' }).expect(200);
      const res = await send({ ...body, subject: 'second body' }, { 'Idempotency-Key': 'order-3' });
      expectMailError(res, 409, 'IDEMPOTENCY_CONFLICT', 'this Idempotency-Key was used with a different request body', {
        suggestion: 'Use a new Idempotency-Key for a different request.',
      });
      expect(await countFor('second body')).toBe(0);
    });

    it('keys are per project, a failed request does not use the key up, and a key older than 24 h is taken anew', async () => {
      const other = await createProject(t, 'Other');
      await addVerifiedDomain(t, dns, other.secretKey, 'other-send.example.com');
      await request(t.url)
        .post('/v1/send')
        .set(bearer(other.secretKey))
        .set('Idempotency-Key', 'order-4')
        .send({ ...body, from: 'a@other-send.example.com', subject: 'per project' })
        .expect(200);
      await send({ ...body, subject: 'per project' }, { 'Idempotency-Key': 'order-4' }).expect(200);
      expect(await countFor('per project')).toBe(4);

      await send({ ...body, from: 'a@unverified.example.com', subject: 'after failure' }, { 'Idempotency-Key': 'order-5' }).expect(403);
      await send({ ...body, subject: 'after failure' }, { 'Idempotency-Key': 'order-5' }).expect(200);
      expect(await countFor('after failure')).toBe(2);

      await db.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'order-5'`);
      await send({ ...body, subject: 'after failure' }, { 'Idempotency-Key': 'order-5' }).expect(200);
      expect(await countFor('after failure')).toBe(4);
    });

    it('without a key, two identical requests send twice', async () => {
      await send({ ...body, subject: 'twice' }).expect(200);
      await send({ ...body, subject: 'twice' }).expect(200);
      expect(await countFor('twice')).toBe(4);
    });
  });
  describe('housekeeping', () => {
    it('drops the attachments of sends older than a day whose emails are all finished, and nothing else', async () => {
      const attachments = [{ filename: 'a.txt', content: Buffer.from('a').toString('base64') }];
      const base = { from: `a@${DOMAIN}`, subject: 'housekeeping', body: 'b', attachments };
      const finished = await send({ ...base, to: ['h1@example.net', 'h2@example.net'] }).expect(200);
      const pending = await send({ ...base, to: ['h3@example.net', 'h4@example.net'] }).expect(200);
      const recent = await send({ ...base, to: 'h5@example.net' }).expect(200);
      const idsOf = (res: request.Response) => res.body.data.emails.map((e: { email: string }) => e.email);
      const requestOf = async (id: string) => (await db.query('SELECT send_request_id FROM emails WHERE id = $1', [id]))[0].send_request_id;
      const [finishedRequest, pendingRequest, recentRequest] = [
        await requestOf(idsOf(finished)[0]),
        await requestOf(idsOf(pending)[0]),
        await requestOf(idsOf(recent)[0]),
      ];
      await db.query(`UPDATE emails SET status = 'SENT' WHERE id = ANY($1::uuid[])`, [
        [...idsOf(finished), idsOf(pending)[0], ...idsOf(recent)],
      ]);
      await db.query(`UPDATE send_requests SET created_at = now() - interval '2 days' WHERE id = ANY($1::uuid[])`, [
        [finishedRequest, pendingRequest],
      ]);

      expect(await t.app.get(SendJobs).purgeSendRequests()).toEqual({ deleted: 1 });
      const left = (
        await db.query('SELECT id FROM send_requests WHERE id = ANY($1::uuid[])', [[finishedRequest, pendingRequest, recentRequest]])
      ).map((r: { id: string }) => r.id);
      expect(left.sort()).toEqual([pendingRequest, recentRequest].sort());
      expect(await requestOf(idsOf(finished)[0])).toBeNull();
      expect((await emailRowsOf(idsOf(finished)))[0]).toMatchObject({ status: 'SENT', subject: 'housekeeping' });
    });

    it('purges Idempotency-Key records past their 24 h window', async () => {
      const body = { to: 'purge@example.net', from: `a@${DOMAIN}`, subject: 's', body: 'b' };
      await send(body, { 'Idempotency-Key': 'purge-old' }).expect(200);
      await send(body, { 'Idempotency-Key': 'purge-new' }).expect(200);
      await db.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'purge-old'`);
      const { deleted } = await t.app.get(SendJobs).purgeIdempotencyKeys();
      expect(deleted).toBeGreaterThanOrEqual(1);
      const keys = (await db.query(`SELECT key FROM idempotency_keys WHERE key LIKE 'purge-%'`)).map((r: { key: string }) => r.key);
      expect(keys).toEqual(['purge-new']);
    });
  });
});
