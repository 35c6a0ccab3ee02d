import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { MailProjectCredentials, MailVerificationResult } from '@app/contracts';
import { VerifyReason } from '../src/modules/verify/verify.service.js';
import { startDnsTestServer, type DnsTestServer, type TestZone } from './support/dns-test-server.js';
import { bearer, createProject, expectMailError, expectValidationError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const NS = ['ns1.dns.test', 'ns2.dns.test'];
const MX = [{ exchange: 'mx1.mail.test', priority: 10 }];
const FULL: TestZone = { ns: NS, mx: MX, a: ['192.0.2.10'] };

/** Every name the test resolver knows; anything else is NXDOMAIN. */
const ZONES: Record<string, TestZone> = {
  'good-company.com': { ...FULL, aaaa: ['2001:db8::10'] },
  'eng.good-company.com': { mx: MX, a: ['192.0.2.11'] }, // a host inside the zone: no NS of its own
  'gmail.com': FULL,
  'mailinator.com': FULL,
  'duck.com': FULL,
  'gnail.com': FULL, // a typo domain that does exist (typosquatted)
  'no-ns-domain.com': { mx: MX, a: ['192.0.2.12'] },
  'no-mx-domain.com': { ns: NS, a: ['192.0.2.13'] },
  'null-mx.com': { ns: NS, mx: [{ exchange: '', priority: 0 }], a: ['192.0.2.14'] },
  'mail-only.com': { ns: NS, mx: MX },
  'v6-only.com': { ns: NS, mx: MX, aaaa: ['2001:db8::15'] },
  'slow-dns.com': { silent: true },
};

/** The all-clear result, for overriding the fields a case changes. */
function good(email: string): MailVerificationResult {
  return {
    email,
    valid: true,
    isDisposable: false,
    isAlias: false,
    isTypo: false,
    isPlusAddressed: false,
    isPersonalEmail: false,
    domainExists: true,
    hasWebsite: true,
    hasMxRecords: true,
    reasons: [],
  };
}

const NOTHING_FOUND = { valid: false, domainExists: false, hasWebsite: false, hasMxRecords: false };

describe('mail POST /v1/verify against a real DNS server', () => {
  let dns: DnsTestServer;
  let t: MailTestApp;
  let p: MailProjectCredentials;
  const verify = async (email: unknown) => {
    const res = await request(t.url).post('/v1/verify').set(bearer(p.secretKey)).send({ email }).expect(200);
    expect(res.body.success).toBe(true);
    return res.body.data as MailVerificationResult;
  };

  beforeAll(async () => {
    dns = await startDnsTestServer(ZONES);
    t = await startMailApp({ env: { MAIL_DNS_SERVERS: dns.address } });
    p = await createProject(t, 'Verify');
  });
  afterAll(async () => {
    await t.close();
    await dns.close();
  });

  it('a good address: valid, no reasons, fields in the documented order', async () => {
    const data = await verify('ana@good-company.com');
    expect(data).toEqual(good('ana@good-company.com'));
    expect(Object.keys(data)).toEqual([
      'email',
      'valid',
      'isDisposable',
      'isAlias',
      'isTypo',
      'isPlusAddressed',
      'isPersonalEmail',
      'domainExists',
      'hasWebsite',
      'hasMxRecords',
      'reasons',
    ]);
    expect(dns.queries).toEqual(expect.arrayContaining(['NS good-company.com', 'MX good-company.com', 'A good-company.com']));
  });

  it('a disposable address (which the provider lists also count as free)', async () => {
    expect(await verify('temp@mailinator.com')).toEqual({
      ...good('temp@mailinator.com'),
      isDisposable: true,
      isPersonalEmail: true,
      reasons: [VerifyReason.disposable, VerifyReason.personal],
    });
  });

  it('a personal (free provider) address', async () => {
    expect(await verify('someone@gmail.com')).toEqual({
      ...good('someone@gmail.com'),
      isPersonalEmail: true,
      reasons: [VerifyReason.personal],
    });
  });

  it('an alias (relay) address', async () => {
    expect(await verify('x7f3@duck.com')).toEqual({ ...good('x7f3@duck.com'), isAlias: true, reasons: [VerifyReason.alias] });
  });

  it('a plus-addressed address', async () => {
    expect(await verify('ana+news@good-company.com')).toEqual({
      ...good('ana+news@good-company.com'),
      isPlusAddressed: true,
      reasons: [VerifyReason.plusAddressed],
    });
  });

  it('a typo: flagged with a suggestion, still valid when the domain receives mail', async () => {
    expect(await verify('bob@gnail.com')).toEqual({
      ...good('bob@gnail.com'),
      isTypo: true,
      reasons: [VerifyReason.typo('bob@gmail.com')],
      suggestion: 'bob@gmail.com',
    });
    // A typo domain that does not exist is invalid for that reason, and still gets its suggestion.
    const missing = await verify('bob@outlok.com');
    expect(missing).toEqual({
      ...good('bob@outlok.com'),
      ...NOTHING_FOUND,
      isTypo: true,
      reasons: [VerifyReason.typo('bob@outlook.com'), VerifyReason.noDomain],
      suggestion: 'bob@outlook.com',
    });
    expect(Object.keys(missing).slice(-2)).toEqual(['reasons', 'suggestion']);
  });

  it('a domain without NS records, or that does not exist, is invalid and nothing more is looked up', async () => {
    expect(await verify('a@no-ns-domain.com')).toEqual({
      ...good('a@no-ns-domain.com'),
      ...NOTHING_FOUND,
      reasons: [VerifyReason.noDomain],
    });
    expect(await verify('a@nxdomain-example.com')).toEqual({
      ...good('a@nxdomain-example.com'),
      ...NOTHING_FOUND,
      reasons: [VerifyReason.noDomain],
    });
    expect(dns.queries.filter((q) => q.endsWith(' no-ns-domain.com') || q.endsWith(' nxdomain-example.com'))).toEqual([
      'NS no-ns-domain.com',
      'NS nxdomain-example.com',
    ]);
  });

  it('a domain without MX records (or with a null MX) is invalid', async () => {
    expect(await verify('a@no-mx-domain.com')).toEqual({
      ...good('a@no-mx-domain.com'),
      valid: false,
      hasMxRecords: false,
      reasons: [VerifyReason.noMx],
    });
    expect(await verify('a@null-mx.com')).toEqual({
      ...good('a@null-mx.com'),
      valid: false,
      hasMxRecords: false,
      reasons: [VerifyReason.noMx],
    });
  });

  it('hasWebsite comes from A or AAAA records and does not decide validity', async () => {
    expect(await verify('a@mail-only.com')).toEqual({ ...good('a@mail-only.com'), hasWebsite: false, reasons: [VerifyReason.noWebsite] });
    expect(await verify('a@v6-only.com')).toEqual(good('a@v6-only.com'));
  });

  it("an address at a host inside a zone finds the zone's NS records at the parent", async () => {
    expect(await verify('dev@eng.good-company.com')).toEqual(good('dev@eng.good-company.com'));
  });

  it('several findings at once, each with its reason', async () => {
    expect(await verify('a+b@mailinator.com')).toEqual({
      ...good('a+b@mailinator.com'),
      isDisposable: true,
      isPersonalEmail: true,
      isPlusAddressed: true,
      reasons: [VerifyReason.disposable, VerifyReason.personal, VerifyReason.plusAddressed],
    });
  });

  it('bad syntax is a finding: invalid, one reason, no DNS lookup', async () => {
    const before = dns.queries.length;
    for (const email of ['not-an-email', 'a@b', 'a@@good-company.com', 'a b@good-company.com', `${'x'.repeat(250)}@good-company.com`]) {
      expect(await verify(email)).toEqual({ ...good(email), ...NOTHING_FOUND, reasons: [VerifyReason.invalidSyntax] });
    }
    expect(dns.queries.length).toBe(before);
  });

  it('answers are cached: verifying a domain again sends no query', async () => {
    await verify('first@good-company.com');
    const before = dns.queries.length;
    expect(await verify('second@GOOD-company.com')).toEqual(good('second@GOOD-company.com'));
    expect(dns.queries.length).toBe(before);
  });

  it('a resolver that does not answer times out per lookup and says so', async () => {
    expect(await verify('a@slow-dns.com')).toEqual({
      ...good('a@slow-dns.com'),
      ...NOTHING_FOUND,
      reasons: [VerifyReason.dnsFailed('NS', 'ETIMEOUT')],
    });
  });

  it('needs the secret key and a string email', async () => {
    expectMailError(await request(t.url).post('/v1/verify').send({ email: 'a@good-company.com' }), 401, 'UNAUTHORIZED', 'missing API key', {
      suggestion: /Bearer/,
    });
    expectMailError(
      await request(t.url).post('/v1/verify').set(bearer(p.publicKey)).send({ email: 'a@good-company.com' }),
      403,
      'SECRET_KEY_REQUIRED',
      /secret key/,
    );
    expectValidationError(await request(t.url).post('/v1/verify').set(bearer(p.secretKey)).send({}), [
      { field: 'email', code: 'isString' },
      { field: 'email', code: 'isNotEmpty' },
      { field: 'email', code: 'maxLength' },
    ]);
    expectValidationError(await request(t.url).post('/v1/verify').set(bearer(p.secretKey)).send({ email: 42 }), [
      { field: 'email', code: 'isString' },
      { field: 'email', code: 'maxLength' },
    ]);
  });
});
