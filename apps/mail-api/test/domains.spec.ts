import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPublicKey, createSign, createVerify } from 'node:crypto';
import request, { type Response } from 'supertest';
import { NestFactory } from '@nestjs/core';
import { type MailDomain, type MailProjectCredentials } from '@app/contracts';
import { QueueService, WorkerRunner } from '@app/service-kit';
import type { ProjectContext } from '../src/core/auth/project-context.js';
import { projectScope } from '../src/core/scope/project-scope.js';
import { DomainsJobs } from '../src/modules/domains/domains.jobs.js';
import { DomainsService } from '../src/modules/domains/domains.service.js';
import { MAINTENANCE_QUEUE, MailMaintenanceJob } from '../src/modules/maintenance/maintenance.queue.js';
import { WorkerModule } from '../src/worker.module.js';
import { startDnsTestServer, type DnsTestServer } from './support/dns-test-server.js';
import { bearer, createProject, expectMailError, expectValidationError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { addVerifiedDomain, publishRecords, txtStrings } from './support/verified-domain.js';

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

describe('mail /domains against a real DNS server', () => {
  let dns: DnsTestServer;
  let t: MailTestApp;
  let p: MailProjectCredentials;
  let auth: Record<string, string>;
  let project: ProjectContext;
  /** Every response body of the file, to prove the private key never appears in one. */
  const seen: string[] = [];
  /** Lines of real private keys (PEM base64), looked for in `seen`. */
  const keyLines: string[] = [];
  const track = (res: Response) => {
    seen.push(res.text);
    return res;
  };
  /** Fails with the body when the status is not the expected one; passes the response on. */
  const status = (res: Response, expected: number) => {
    if (res.status !== expected) throw new Error(`expected ${expected}, got ${res.status}: ${res.text}`);
    return res;
  };
  const add = async (domain: string) => track(await request(t.url).post('/domains').set(auth).send({ domain }));
  const verify = async (id: string, key = auth) => track(await request(t.url).post(`/domains/${id}/verify`).set(key));
  const get = async (id: string, key = auth) => track(await request(t.url).get(`/domains/${id}`).set(key));

  beforeAll(async () => {
    dns = await startDnsTestServer({});
    t = await startMailApp({ env: { MAIL_DNS_SERVERS: dns.address } });
    p = await createProject(t, 'Domains');
    auth = bearer(p.secretKey);
    project = { id: p.id, name: p.name, keyKind: 'secret' };
  });
  afterAll(async () => {
    await t.close();
    await dns.close();
  });

  describe('POST /domains', () => {
    it('answers 201 with a PENDING domain and the two TXT records to publish', async () => {
      const res = status(await add('  Example.COM. '), 201);
      const domain = res.body as MailDomain;
      expect(domain).toEqual({
        id: expect.any(String),
        domain: 'example.com',
        status: 'PENDING',
        verified: false,
        records: [
          { type: 'TXT', name: '_mail-verification.example.com', value: expect.stringMatching(/^mail-verification=[0-9a-f]{32}$/) },
          {
            type: 'TXT',
            name: expect.stringMatching(/^mail[0-9a-f]{8}\._domainkey\.example\.com$/),
            value: expect.stringMatching(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/),
          },
        ],
        failureReasons: [],
        lastCheckedAt: null,
        verifiedAt: null,
        createdAt: ISO,
        updatedAt: ISO,
      });
      const p64 = domain.records[1].value.split('p=')[1];
      const key = createPublicKey({ key: Buffer.from(p64, 'base64'), format: 'der', type: 'spki' });
      expect(key.asymmetricKeyType).toBe('rsa');
      expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
      // A second domain gets its own key, selector and token.
      const other = status(await add('example.org'), 201).body as MailDomain;
      expect(other.records[0].value).not.toBe(domain.records[0].value);
      expect(other.records[1].value).not.toBe(domain.records[1].value);
      expect(other.records[1].name.split('.')[0]).not.toBe(domain.records[1].name.split('.')[0]);
    });

    it('an internationalized name is stored as its punycode A-label', async () => {
      const res = status(await add('Bücher.example'), 201);
      expect(res.body.domain).toBe('xn--bcher-kva.example');
      expect(res.body.records[0].name).toBe('_mail-verification.xn--bcher-kva.example');
    });

    it('the same domain twice in a project: 409 DOMAIN_EXISTS, whatever the spelling; another project may add it', async () => {
      status(await add('dup.example'), 201);
      for (const spelling of ['dup.example', 'DUP.example.']) {
        expectMailError(await add(spelling), 409, 'DOMAIN_EXISTS', 'domain dup.example is already added to this project');
      }
      const q = await createProject(t, 'Another');
      await request(t.url).post('/domains').set(bearer(q.secretKey)).send({ domain: 'dup.example' }).expect(201);
    });

    it('concurrent adds of one domain create exactly one', async () => {
      const results = await Promise.all([add('race.example'), add('race.example'), add('race.example')]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    });

    it('422 isDomainName for what is not a DNS host name', async () => {
      const cases: [unknown, string][] = [
        ['', 'domain must not be empty'],
        ['.', 'domain must not be empty'],
        ['localhost', 'domain must have at least two labels, like example.com'],
        ['192.168.1.10', 'domain must be a host name, not an IP address'],
        ['10.0.0.1.5', 'domain must be a host name, not an IP address'],
        ['::1', 'domain must be a host name, not an IP address'],
        ['[2001:db8::1]', 'domain must be a host name, not an IP address'],
        ['a..example.com', 'domain must not contain empty labels'],
        [`${'a'.repeat(64)}.com`, 'domain labels must be at most 63 characters'],
        [`${'abcdefghi.'.repeat(25)}info`, 'domain must be at most 253 characters'],
        ['under_score.com', 'domain labels may only contain letters, digits and hyphens, and must not start or end with a hyphen'],
        ['-start.com', 'domain labels may only contain letters, digits and hyphens, and must not start or end with a hyphen'],
        ['end-.com', 'domain labels may only contain letters, digits and hyphens, and must not start or end with a hyphen'],
        ['user@example.com', 'domain labels may only contain letters, digits and hyphens, and must not start or end with a hyphen'],
        ['https://example.com', 'domain labels may only contain letters, digits and hyphens, and must not start or end with a hyphen'],
        ['exa mple.com', 'domain labels may only contain letters, digits and hyphens, and must not start or end with a hyphen'],
        [42, 'domain must be a string'],
        [undefined, 'domain must be a string'],
      ];
      for (const [domain, message] of cases) {
        expectValidationError(track(await request(t.url).post('/domains').set(auth).send({ domain })), [
          { field: 'domain', code: 'isDomainName', message },
        ]);
      }
      // 63-character labels and 253 characters in all are fine.
      status(await add(`${'a'.repeat(63)}.com`), 201);
      status(await add(`${'abcdefghi.'.repeat(24)}abcdefghi.com`), 201);
    });
  });

  describe('POST /domains/{id}/verify', () => {
    it('records missing: FAILED, a reason per record, each record verified: false', async () => {
      const created = status(await add('missing.example'), 201).body as MailDomain;
      const res = status(await verify(created.id), 200);
      expect(res.body).toEqual({
        ...created,
        status: 'FAILED',
        verified: false,
        records: created.records.map((r) => ({ ...r, verified: false })),
        failureReasons: [`TXT record _mail-verification.missing.example not found`, `TXT record ${created.records[1].name} not found`],
        lastCheckedAt: ISO,
        updatedAt: ISO,
      });
      expect(await get(created.id).then((r) => r.body)).toEqual(res.body);
    });

    it('records published: VERIFIED at once (no cached "not found" from the failed check)', async () => {
      const created = status(await add('publish.example'), 201).body as MailDomain;
      expect((await verify(created.id)).body.status).toBe('FAILED');
      publishRecords(dns, created.records);
      const res = status(await verify(created.id), 200);
      expect(res.body).toEqual({
        ...created,
        status: 'VERIFIED',
        verified: true,
        records: created.records.map((r) => ({ ...r, verified: true })),
        failureReasons: [],
        lastCheckedAt: ISO,
        verifiedAt: ISO,
        updatedAt: ISO,
      });
      // Checking again keeps the first verification time.
      const again = status(await verify(created.id), 200);
      expect(again.body.verifiedAt).toBe(res.body.verifiedAt);
      expect(dns.queries).toEqual(expect.arrayContaining([`TXT _mail-verification.publish.example`, `TXT ${created.records[1].name}`]));
    });

    it('TXT split into several strings, spaces in the key, extra tags and other TXT records at the names: VERIFIED', async () => {
      const created = status(await add('split.example'), 201).body as MailDomain;
      const [ownership, dkim] = created.records;
      const key = dkim.value.split('p=')[1];
      const spaced = `v=DKIM1; t=s; h=sha256; k=rsa; p=${key.slice(0, 100)} ${key.slice(100, 200)}\t${key.slice(200)} `;
      dns.zones[ownership.name] = { txt: [['v=spf1 -all'], [ownership.value.slice(0, 10), ownership.value.slice(10)]] };
      dns.zones[dkim.name] = { txt: [['unrelated'], txtStrings(spaced, 60)] };
      const res = status(await verify(created.id), 200);
      expect(res.body).toMatchObject({ status: 'VERIFIED', verified: true, failureReasons: [] });
    });

    it('records with other values: FAILED with what is wrong', async () => {
      const created = status(await add('wrong.example'), 201).body as MailDomain;
      const [ownership, dkim] = created.records;
      const otherKey = ((await add('other-key.example')).body as MailDomain).records[1].value;
      dns.zones[ownership.name] = { txt: [['mail-verification=00000000000000000000000000000000']] };
      dns.zones[dkim.name] = { txt: [txtStrings(otherKey)] };
      const res = status(await verify(created.id), 200);
      expect(res.body).toMatchObject({
        status: 'FAILED',
        verified: false,
        records: [
          { ...ownership, verified: false },
          { ...dkim, verified: false },
        ],
        failureReasons: [
          `TXT record ${ownership.name} found, but none of its values is the verification token`,
          `TXT record ${dkim.name} found, but it does not publish this domain's DKIM public key (p=)`,
        ],
      });
      // Only the DKIM record fixed: still FAILED, and only the token is reported.
      dns.zones[dkim.name] = { txt: [txtStrings(dkim.value)] };
      const half = status(await verify(created.id), 200);
      expect(half.body).toMatchObject({
        status: 'FAILED',
        records: [{ verified: false }, { verified: true }],
        failureReasons: [expect.stringContaining(ownership.name)],
      });
      expect(half.body.failureReasons).toHaveLength(1);
    });

    it('DNS server silent: the domain stays PENDING, with the lookup failures as reasons', async () => {
      const created = status(await add('slow.example'), 201).body as MailDomain;
      for (const record of created.records) dns.zones[record.name] = { silent: true };
      const res = status(await verify(created.id), 200);
      expect(res.body).toMatchObject({
        status: 'PENDING',
        verified: false,
        lastCheckedAt: ISO,
        records: [{ verified: false }, { verified: false }],
      });
      expect(res.body.failureReasons).toEqual(
        created.records.map((r) =>
          expect.stringMatching(
            new RegExp(`^DNS lookup of TXT ${r.name.replace(/\./g, '\\.')} failed \\(E[A-Z]+\\); the check will be retried$`),
          ),
        ),
      );
    });

    it('a VERIFIED domain stays VERIFIED without its ownership record, and becomes FAILED when its DKIM record goes', async () => {
      const domain = await addVerifiedDomain(t, dns, p.secretKey, 'recheck.example');
      delete dns.zones[domain.records[0].name];
      const kept = status(await verify(domain.id), 200);
      expect(kept.body).toMatchObject({
        status: 'VERIFIED',
        verified: true,
        verifiedAt: domain.verifiedAt,
        records: [{ verified: false }, { verified: true }],
      });
      delete dns.zones[domain.records[1].name];
      const failed = status(await verify(domain.id), 200);
      expect(failed.body).toMatchObject({ status: 'FAILED', verified: false, verifiedAt: null });
      expect(await service().dkimForDomain(projectScope(p.id), 'recheck.example')).toBeNull();
    });
  });

  const service = () => t.app.get(DomainsService);

  it('the recheck job verifies pending domains whose records appeared, and leaves the others', async () => {
    const later = status(await add('later.example'), 201).body as MailDomain;
    const never = status(await add('never.example'), 201).body as MailDomain;
    const jobs = t.app.get(DomainsJobs);
    publishRecords(dns, later.records);
    const first = await jobs.recheckDomains({ data: {} });
    expect(first.checked).toBeGreaterThanOrEqual(2);
    expect(first.verified).toBeGreaterThanOrEqual(1);
    expect((await get(later.id)).body).toMatchObject({ status: 'VERIFIED', verified: true, verifiedAt: ISO });
    expect((await get(never.id)).body).toMatchObject({ status: 'FAILED', lastCheckedAt: ISO });
    // Idempotent: running again changes nothing for the verified one (it is no longer in the batch).
    const verifiedAt = (await get(later.id)).body.verifiedAt;
    await jobs.recheckDomains({ data: {} });
    expect((await get(later.id)).body.verifiedAt).toBe(verifiedAt);
  });

  it("with the worker's modules (in process), the recheck job added to the real queue runs", async () => {
    const pending = status(await add('queued.example'), 201).body as MailDomain;
    publishRecords(dns, pending.records);
    const worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(t.config), { logger: false });
    try {
      const runner = worker.get(WorkerRunner);
      expect([...(runner.discoverHandlers().get(MAINTENANCE_QUEUE)?.keys() ?? [])]).toContain(MailMaintenanceJob.RecheckDomains);
      await runner.start({ queues: [MAINTENANCE_QUEUE] });
      await t.app.get(QueueService).add(MAINTENANCE_QUEUE, MailMaintenanceJob.RecheckDomains, {});
      const deadline = Date.now() + 15_000;
      while ((await get(pending.id)).body.status !== 'VERIFIED' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect((await get(pending.id)).body).toMatchObject({ status: 'VERIFIED', verified: true });
    } finally {
      await worker.close();
    }
  });

  describe('sender checks for the send path', () => {
    it('senderDomain: 403 DOMAIN_NOT_VERIFIED for unknown, pending and sub- or parent domains; the key for a verified one', async () => {
      const verified = await addVerifiedDomain(t, dns, p.secretKey, 'sender.example');
      status(await add('pending-sender.example'), 201);
      const cases: [string, string][] = [
        ['a@unknown.example', 'sender domain unknown.example is not verified'],
        ['a@pending-sender.example', 'sender domain pending-sender.example is not verified'],
        ['a@mail.sender.example', 'sender domain mail.sender.example is not verified'],
        ['a@example', 'sender domain example is not verified'],
        ['no-at-sign', 'sender address "no-at-sign" has no domain'],
      ];
      for (const [email, message] of cases) {
        await expect(service().senderDomain(project, email)).rejects.toMatchObject({ code: 'DOMAIN_NOT_VERIFIED', status: 403, message });
      }
      const sender = await service().senderDomain(project, 'Hello@Sender.Example');
      expect(sender).toEqual({
        id: verified.id,
        domain: 'sender.example',
        dkimSelector: verified.records[1].name.split('.')[0],
        dkimPrivateKey: expect.stringContaining('-----BEGIN PRIVATE KEY-----'),
      });
      // The private key belongs to the published public key.
      const signature = createSign('sha256').update('probe').sign(sender.dkimPrivateKey);
      const published = createPublicKey({
        key: Buffer.from(verified.records[1].value.split('p=')[1], 'base64'),
        format: 'der',
        type: 'spki',
      });
      expect(createVerify('sha256').update('probe').verify(published, signature)).toBe(true);
      // Another project cannot send from it.
      const q = await createProject(t, 'Not the owner');
      await expect(service().senderDomain({ id: q.id, name: q.name, keyKind: 'secret' }, 'a@sender.example')).rejects.toMatchObject({
        code: 'DOMAIN_NOT_VERIFIED',
      });
      expect(await service().dkimForDomain(projectScope(p.id), 'SENDER.example')).toEqual(sender);
      expect(await service().dkimForDomain(projectScope(p.id), 'pending-sender.example')).toBeNull();
      expect(await service().dkimForDomain(projectScope(q.id), 'sender.example')).toBeNull();
      keyLines.push(
        ...sender.dkimPrivateKey
          .split('\n')
          .filter((line) => /^[A-Za-z0-9+/]{64}$/.test(line))
          .slice(0, 5),
      );
    });
  });

  describe('DELETE /domains/{id}', () => {
    it('409 DOMAIN_IN_USE while a template sends from it, 204 once none does', async () => {
      const domain = status(await add('used.example'), 201).body as MailDomain;
      const template = await request(t.url)
        .post('/templates')
        .set(auth)
        .send({ name: 'Receipt', subject: 'Receipt', body: '<p>thanks</p>', from: 'billing@USED.example' })
        .expect(201);
      // A template on a subdomain does not hold the parent.
      await request(t.url)
        .post('/templates')
        .set(auth)
        .send({ name: 'Sub', subject: 's', body: 'b', from: 'x@sub.used.example' })
        .expect(201);
      expectMailError(
        track(await request(t.url).delete(`/domains/${domain.id}`).set(auth)),
        409,
        'DOMAIN_IN_USE',
        `domain used.example is in use by template "Receipt" (${template.body.id}); change their from address first`,
      );
      await request(t.url).patch(`/templates/${template.body.id}`).set(auth).send({ from: 'billing@elsewhere.example' }).expect(200);
      const res = await request(t.url).delete(`/domains/${domain.id}`).set(auth).expect(204);
      expect(res.text).toBe('');
      expectMailError(await get(domain.id), 404, 'NOT_FOUND', 'domain not found');
      expectMailError(await request(t.url).delete(`/domains/${domain.id}`).set(auth), 404, 'NOT_FOUND', 'domain not found');
    });

    it('a verified domain can be deleted; sending from it is then refused', async () => {
      const domain = await addVerifiedDomain(t, dns, p.secretKey, 'gone.example');
      await request(t.url).delete(`/domains/${domain.id}`).set(auth).expect(204);
      await expect(service().senderDomain(project, 'a@gone.example')).rejects.toMatchObject({ code: 'DOMAIN_NOT_VERIFIED' });
    });
  });

  describe('GET /domains', () => {
    let q: MailProjectCredentials;
    let qAuth: Record<string, string>;
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      q = await createProject(t, 'Domain list');
      qAuth = bearer(q.secretKey);
      ids.pending = (await request(t.url).post('/domains').set(qAuth).send({ domain: 'pending.list.example' }).expect(201)).body.id;
      ids.failed = (await request(t.url).post('/domains').set(qAuth).send({ domain: 'failed.list.example' }).expect(201)).body.id;
      await verify(ids.failed, qAuth);
      ids.verified = (await addVerifiedDomain(t, dns, q.secretKey, 'verified.list.example')).id;
    });

    it('lists newest first with the status filter, keyset-paged', async () => {
      const all = track(await request(t.url).get('/domains').set(qAuth).expect(200));
      expect(all.body).toEqual({
        items: [
          expect.objectContaining({ id: ids.verified, status: 'VERIFIED', verified: true }),
          expect.objectContaining({ id: ids.failed, status: 'FAILED' }),
          expect.objectContaining({
            id: ids.pending,
            status: 'PENDING',
            records: [expect.not.objectContaining({ verified: expect.anything() }), expect.anything()],
          }),
        ],
        nextCursor: null,
        hasMore: false,
        total: 3,
      });
      for (const [status, id] of [
        ['VERIFIED', ids.verified],
        ['PENDING', ids.pending],
        ['FAILED', ids.failed],
      ]) {
        const res = track(await request(t.url).get(`/domains?status=${status}`).set(qAuth).expect(200));
        expect(res.body).toEqual({ items: [expect.objectContaining({ id, status })], nextCursor: null, hasMore: false, total: 1 });
      }
      const page1 = track(await request(t.url).get('/domains?limit=2').set(qAuth).expect(200));
      expect(page1.body).toMatchObject({ items: [{ id: ids.verified }, { id: ids.failed }], hasMore: true, total: 3 });
      const page2 = track(await request(t.url).get(`/domains?limit=2&cursor=${page1.body.nextCursor}`).set(qAuth).expect(200));
      expect(page2.body).toMatchObject({ items: [{ id: ids.pending }], nextCursor: null, hasMore: false, total: 3 });
    });

    it('422 for an unknown status, a bad limit or cursor', async () => {
      expectValidationError(await request(t.url).get('/domains?status=verified').set(qAuth), [
        { field: 'status', code: 'isIn', message: 'status must be one of the following values: PENDING, VERIFIED, FAILED' },
      ]);
      expectValidationError(await request(t.url).get('/domains?limit=0').set(qAuth), [{ field: 'limit', code: 'min' }]);
      expectValidationError(await request(t.url).get('/domains?cursor=abc').set(qAuth), [{ field: 'cursor', code: 'isCursor' }]);
    });

    it("another project's domain is a 404 everywhere and absent from lists", async () => {
      for (const id of [ids.verified, 'not-a-uuid']) {
        expectMailError(await get(id), 404, 'NOT_FOUND', 'domain not found');
        expectMailError(await verify(id), 404, 'NOT_FOUND', 'domain not found');
        expectMailError(await request(t.url).delete(`/domains/${id}`).set(auth), 404, 'NOT_FOUND', 'domain not found');
      }
      const mine = track(await request(t.url).get('/domains?limit=100').set(auth).expect(200));
      expect(mine.body.items.map((d: MailDomain) => d.id)).not.toContain(ids.verified);
      expect((await get(ids.verified, qAuth)).status).toBe(200);
    });
  });

  it('the public key is refused: 403 SECRET_KEY_REQUIRED', async () => {
    const domain = status(await add('pk.example'), 201).body as MailDomain;
    const attempts = [
      request(t.url).get('/domains'),
      request(t.url).post('/domains').send({ domain: 'pk2.example' }),
      request(t.url).get(`/domains/${domain.id}`),
      request(t.url).post(`/domains/${domain.id}/verify`),
      request(t.url).delete(`/domains/${domain.id}`),
    ];
    for (const attempt of attempts) {
      expectMailError(
        await attempt.set(bearer(p.publicKey)),
        403,
        'SECRET_KEY_REQUIRED',
        'this endpoint requires the secret key (sk_...); public keys only work on POST /v1/track',
      );
    }
  });

  it('no response of this file carried a private key', () => {
    expect(keyLines).toHaveLength(5);
    const bodies = seen.join('\n');
    expect(bodies.length).toBeGreaterThan(10_000);
    expect(bodies).not.toContain('PRIVATE KEY');
    for (const line of keyLines) expect(bodies).not.toContain(line);
    expect(bodies).not.toMatch(/privateKey|private_key/i);
  });
});
