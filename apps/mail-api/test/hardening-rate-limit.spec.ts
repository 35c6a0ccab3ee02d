import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request, { type Response } from 'supertest';
import { bearer, createProject, expectMailError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const LIMIT = 5;
const PER_CLIENT = 3;
const PROJECT_MESSAGE = `rate limit exceeded: ${LIMIT} public-key requests per minute per project`;
const CLIENT_MESSAGE = `rate limit exceeded: ${PER_CLIENT} public-key requests per minute per project from one client address`;
const track = { email: 'visitor@example.com', event: 'page-viewed' };

function expectRateHeaders(res: Response, limit: number, remaining: number): void {
  expect({ limit: res.headers['ratelimit-limit'], remaining: res.headers['ratelimit-remaining'] }).toEqual({
    limit: String(limit),
    remaining: String(remaining),
  });
  const reset = Number(res.headers['ratelimit-reset']);
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(60);
}

function expectLimited(res: Response, limit: number, message: string): void {
  expectMailError(res, 429, 'RATE_LIMIT_EXCEEDED', message, { suggestion: /^retry after \d+ s$/ });
  expectRateHeaders(res, limit, 0);
  expect(res.headers['retry-after']).toBe(res.headers['ratelimit-reset']);
}

describe('public keys have their own rate limit, per project and per client address (issue #11, 14)', () => {
  let t: MailTestApp;
  beforeAll(async () => {
    // The test client stands in for a proxy on loopback, so X-Forwarded-For names the client.
    t = await startMailApp({
      env: {
        MAIL_RATE_LIMIT_PER_MINUTE: String(LIMIT),
        MAIL_PUBLIC_RATE_LIMIT_PER_IP_PER_MINUTE: String(PER_CLIENT),
        TRUST_PROXY: '127.0.0.1,::1',
      },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  const trackFrom = (key: string, ip: string) => request(t.url).post('/v1/track').set(bearer(key)).set('X-Forwarded-For', ip).send(track);

  it('exhausting the public budget leaves the secret key its whole budget', async () => {
    const p = await createProject(t, 'Scraped public key');
    // Five clients, one request each: only the project's public budget runs out.
    for (let i = 0; i < LIMIT; i += 1) expect((await trackFrom(p.publicKey, `203.0.113.${i + 1}`)).status).toBe(200);
    expectLimited(await trackFrom(p.publicKey, '203.0.113.99'), LIMIT, PROJECT_MESSAGE);

    const contacts = await request(t.url).get('/contacts').set(bearer(p.secretKey)).expect(200);
    expectRateHeaders(contacts, LIMIT, LIMIT - 1);
    const tracked = await request(t.url).post('/v1/track').set(bearer(p.secretKey)).send(track).expect(200);
    expectRateHeaders(tracked, LIMIT, LIMIT - 2);
    // The public budget is still spent: the secret key's requests did not refill or share it.
    expectLimited(await trackFrom(p.publicKey, '203.0.113.100'), LIMIT, PROJECT_MESSAGE);
  });

  it('the secret key spends nothing of the public budget', async () => {
    const p = await createProject(t, 'Busy backend');
    for (let i = 0; i < LIMIT; i += 1) await request(t.url).get('/contacts').set(bearer(p.secretKey)).expect(200);
    expectMailError(
      await request(t.url).get('/contacts').set(bearer(p.secretKey)),
      429,
      'RATE_LIMIT_EXCEEDED',
      `rate limit exceeded: ${LIMIT} requests per minute per project`,
      {
        suggestion: /^retry after \d+ s$/,
      },
    );
    expect((await trackFrom(p.publicKey, '198.51.100.1')).status).toBe(200);
  });

  it("one client address cannot spend the project's public budget alone; a refused request spends none of it", async () => {
    const p = await createProject(t, 'Per client');
    const first = await trackFrom(p.publicKey, '198.51.100.7').expect(200);
    // The answer names the tighter of the two budgets: the client's (3 - 1) before the project's (5 - 1).
    expectRateHeaders(first, PER_CLIENT, PER_CLIENT - 1);
    for (let i = 1; i < PER_CLIENT; i += 1) await trackFrom(p.publicKey, '198.51.100.7').expect(200);
    for (let i = 0; i < 3; i += 1) expectLimited(await trackFrom(p.publicKey, '198.51.100.7'), PER_CLIENT, CLIENT_MESSAGE);
    // 3 of the project's 5 are spent; the refused requests spent none: two more clients get through.
    expectRateHeaders(await trackFrom(p.publicKey, '198.51.100.8').expect(200), LIMIT, 1);
    expectRateHeaders(await trackFrom(p.publicKey, '198.51.100.9').expect(200), LIMIT, 0);
    expectLimited(await trackFrom(p.publicKey, '198.51.100.10'), LIMIT, PROJECT_MESSAGE);
  });

  it('counts IPv6 clients by /64, and each project apart', async () => {
    const p = await createProject(t, 'IPv6');
    for (const ip of ['2001:db8:aa:bb::1', '2001:db8:aa:bb::2', '2001:db8:aa:bb:ffff:ffff:ffff:ffff']) {
      expect((await trackFrom(p.publicKey, ip)).status).toBe(200);
    }
    expectLimited(await trackFrom(p.publicKey, '2001:db8:aa:bb:1234::99'), PER_CLIENT, CLIENT_MESSAGE);
    expect((await trackFrom(p.publicKey, '2001:db8:aa:cc::1')).status).toBe(200);
    // The same address has a budget of its own with another project.
    const other = await createProject(t, 'IPv6 other');
    expect((await trackFrom(other.publicKey, '2001:db8:aa:bb::1')).status).toBe(200);
  });
});
