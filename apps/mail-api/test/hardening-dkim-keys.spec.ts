import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { dkimVerify } from 'mailauth';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { startInProcessWorker } from '@app/service-kit/testing';
import { loadMailConfig } from '../src/config/mail-config.js';
import { createMailHttpApp } from '../src/http-setup.js';
import { EMAIL_QUEUE } from '../src/modules/delivery/email-delivery.queue.js';
import { DkimKeyCipher } from '../src/modules/domains/dkim-key-cipher.js';
import { WorkerModule } from '../src/worker.module.js';
import { insertVerifiedDomain, waitForStatus } from './support/delivery-fixtures.js';
import { startDnsTestServer, type DnsTestServer } from './support/dns-test-server.js';
import { bearer, createProject } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';
import { addVerifiedDomain } from './support/verified-domain.js';

const SEALED = /^v1:[A-Za-z0-9+/]+=*$/;

describe('DKIM private keys are encrypted at rest (issue #11, 15)', () => {
  let t: MailTestApp;
  let dns: DnsTestServer;
  let sink: SmtpSink;
  let db: DataSource;
  let p: MailProjectCredentials;
  let worker: INestApplicationContext | null = null;

  beforeAll(async () => {
    dns = await startDnsTestServer({});
    sink = await startSmtpSink();
    t = await startMailApp({ env: { MAIL_DNS_SERVERS: dns.address, MAIL_SMTP_URL: sink.url, MAIL_RATE_PER_SECOND: '1000' } });
    db = t.app.get(DataSource);
    p = await createProject(t, 'DKIM at rest');
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

  async function storedKey(domain: string): Promise<string> {
    const [row] = await db.query(`SELECT dkim_private_key FROM domains WHERE project_id = $1 AND domain = $2`, [p.id, domain]);
    return row.dkim_private_key;
  }

  /** Sends one email from `from` through the API and a worker; answers the raw message the SMTP sink got. */
  async function sendAndDeliver(from: string): Promise<Buffer> {
    const res = await request(t.url)
      .post('/v1/send')
      .set(bearer(p.secretKey))
      .send({ to: 'reader@example.net', from, subject: 'Hi', body: '<p>Hi</p>' })
      .expect(200);
    const id = res.body.data.emails[0].email as string;
    worker = await startInProcessWorker(WorkerModule.forRoot(t.config), { queues: [EMAIL_QUEUE] });
    const [row] = await waitForStatus(db, [id], ['SENT', 'FAILED']);
    expect({ status: row.status, error: row.error }).toEqual({ status: 'SENT', error: null });
    return sink.messagesFor([id])[0].raw;
  }

  const resolverFor = (records: Record<string, string>) => (name: string) => {
    if (records[name]) return Promise.resolve([records[name].match(/.{1,250}/g)!]);
    return Promise.reject(Object.assign(new Error(`no TXT for ${name}`), { code: 'ENOTFOUND' }));
  };

  it("a new domain's key is stored sealed (no PEM in the row), and its mail is still DKIM-signed", async () => {
    const domain = await addVerifiedDomain(t, dns, p.secretKey, 'sealed.example.com');
    const stored = await storedKey('sealed.example.com');
    expect(stored).toMatch(SEALED);
    expect(stored).not.toContain('PRIVATE KEY');
    expect(Buffer.from(stored.slice(3), 'base64').toString('latin1')).not.toContain('PRIVATE KEY');

    const raw = await sendAndDeliver('hello@sealed.example.com');
    const records = Object.fromEntries(domain.records.map((r) => [r.name, r.value]));
    const dkim = await dkimVerify(raw, { resolver: resolverFor(records) });
    expect(dkim.results).toHaveLength(1);
    expect(dkim.results[0]).toMatchObject({ signingDomain: 'sealed.example.com', status: { result: 'pass' } });
  }, 60_000);

  it('plaintext keys written before encryption are sealed at the next start (idempotently) and still sign', async () => {
    const legacy = await insertVerifiedDomain(db, p.id, 'legacy.example.com');
    expect(await storedKey('legacy.example.com')).toBe(legacy.privateKey);
    // Two instances starting at once: both run the step; the lock and the sealed check make it happen once.
    const [first, second] = await Promise.all([createMailHttpApp(t.config), createMailHttpApp(t.config)]);
    try {
      await Promise.all([first.init(), second.init()]);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
    const sealed = await storedKey('legacy.example.com');
    expect(sealed).toMatch(SEALED);
    expect(sealed).not.toContain('PRIVATE KEY');
    // A further start leaves sealed rows as they are.
    const third = await createMailHttpApp(t.config);
    await third.init();
    await third.close();
    expect(await storedKey('legacy.example.com')).toBe(sealed);

    const raw = await sendAndDeliver('news@legacy.example.com');
    const dkim = await dkimVerify(raw, {
      resolver: resolverFor({ [`${legacy.selector}._domainkey.legacy.example.com`]: legacy.dkimRecord }),
    });
    expect(dkim.results[0]).toMatchObject({ signingDomain: 'legacy.example.com', status: { result: 'pass' } });
  }, 60_000);

  it('no API response carries the private key, sealed or not', async () => {
    const list = await request(t.url).get('/domains').set(bearer(p.secretKey)).expect(200);
    expect(JSON.stringify(list.body)).not.toMatch(/PRIVATE KEY|"v1:/);
  });
});

describe('the DKIM key cipher', () => {
  const pem = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const owner = { projectId: '0190d2f0-0000-7000-8000-000000000001', domain: 'a.example' };
  const cipher = new DkimKeyCipher({ secretsKey: randomBytes(32) });

  it('opens what it sealed, with fresh randomness each time', () => {
    const sealed = cipher.seal(pem, owner);
    expect(sealed).toMatch(SEALED);
    expect(cipher.open(sealed, owner)).toBe(pem);
    expect(cipher.seal(pem, owner)).not.toBe(sealed);
  });

  it('refuses another MAIL_SECRETS_KEY, another row, and altered ciphertext', () => {
    const sealed = cipher.seal(pem, owner);
    expect(() => new DkimKeyCipher({ secretsKey: randomBytes(32) }).open(sealed, owner)).toThrow(/cannot be decrypted/);
    expect(() => cipher.open(sealed, { ...owner, domain: 'b.example' })).toThrow(/cannot be decrypted/);
    expect(() => cipher.open(sealed, { ...owner, projectId: '0190d2f0-0000-7000-8000-000000000002' })).toThrow(/cannot be decrypted/);
    const body = Buffer.from(sealed.slice(3), 'base64');
    body[body.length - 1] ^= 1;
    expect(() => cipher.open(`v1:${body.toString('base64')}`, owner)).toThrow(/cannot be decrypted/);
    expect(() => cipher.open('garbage', owner)).toThrow(/unknown format/);
  });

  it('reads a legacy plaintext PEM as it is (until the start step seals it)', () => {
    expect(cipher.open(pem, owner)).toBe(pem);
  });
});

describe('MAIL_SECRETS_KEY', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'mail-secrets-key-'));
  const production = { DATA_DIR: dataDir, NODE_ENV: 'production', MAIL_LINK_SECRET: 'link-secret' };

  it('is required in production, and must be 32 bytes (hex or base64)', () => {
    expect(() => loadMailConfig(production)).toThrow(/MAIL_SECRETS_KEY is required when NODE_ENV=production/);
    for (const bad of ['short', 'ab'.repeat(31), randomBytes(31).toString('base64'), 'zz'.repeat(32)]) {
      expect(() => loadMailConfig({ ...production, MAIL_SECRETS_KEY: bad })).toThrow(/MAIL_SECRETS_KEY must be 32 bytes/);
    }
    const key = randomBytes(32);
    expect(loadMailConfig({ ...production, MAIL_SECRETS_KEY: key.toString('hex') }).secretsKey.equals(key)).toBe(true);
    expect(loadMailConfig({ ...production, MAIL_SECRETS_KEY: key.toString('base64') }).secretsKey.equals(key)).toBe(true);
  });

  it('outside production defaults to a random per-install key kept under DATA_DIR/secrets', () => {
    const first = loadMailConfig({ DATA_DIR: dataDir }).secretsKey;
    expect(first).toHaveLength(32);
    const file = path.join(dataDir, 'secrets', 'mail_secrets_key');
    expect(existsSync(file)).toBe(true);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'hex').equals(first)).toBe(true);
    expect(loadMailConfig({ DATA_DIR: dataDir }).secretsKey.equals(first)).toBe(true);
  });
});
