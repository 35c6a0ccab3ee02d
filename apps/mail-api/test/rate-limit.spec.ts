import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request, { type Response } from 'supertest';
import { listen } from '@app/service-kit';
import { startRedisServer, type RedisServerHandle } from '@app/service-kit/testing';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createMailHttpApp } from '../src/http-setup.js';
import { bearer, createProject, expectMailError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const LIMIT = 5;

function expectRateHeaders(res: Response, remaining: number): void {
  expect(res.headers['ratelimit-limit']).toBe(String(LIMIT));
  expect(res.headers['ratelimit-remaining']).toBe(String(remaining));
  const reset = Number(res.headers['ratelimit-reset']);
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(60);
}

describe('mail rate limit per project, across instances', () => {
  let t: MailTestApp;
  let second: NestExpressApplication;
  let secondUrl: string;
  beforeAll(async () => {
    t = await startMailApp({ env: { MAIL_RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
    // A second instance of the API: same database, same Redis and key prefix, its own process state.
    second = await createMailHttpApp(t.config);
    secondUrl = await listen(second, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await second.close();
    await t.close();
  });

  it('counts every keyed request of a project on every instance; past the limit 429 with Retry-After', async () => {
    const p = await createProject(t, 'Limited');
    const urls = [t.url, secondUrl, t.url, secondUrl, t.url];
    for (const [i, url] of urls.entries()) {
      const res = await request(url).get('/contacts').set(bearer(p.secretKey)).expect(200);
      expectRateHeaders(res, LIMIT - 1 - i);
    }
    for (const url of [t.url, secondUrl]) {
      const res = await request(url).post('/v1/verify').set(bearer(p.secretKey)).send({ email: 'a@example.com' });
      expectMailError(res, 429, 'RATE_LIMIT_EXCEEDED', `rate limit exceeded: ${LIMIT} requests per minute per project`, {
        suggestion: /^retry after \d+ s$/,
      });
      expectRateHeaders(res, 0);
      expect(res.headers['retry-after']).toBe(res.headers['ratelimit-reset']);
    }
    // The public key has a budget of its own (hardening-rate-limit.spec.ts), shared by the instances too.
    for (const [i, url] of [t.url, secondUrl].entries()) {
      const res = await request(url).post('/v1/track').set(bearer(p.publicKey)).send({ email: 'a@example.com', event: 'x' }).expect(200);
      expectRateHeaders(res, LIMIT - 1 - i);
    }
    // Another project has its own budget; the probes have none.
    const other = await createProject(t, 'Other');
    expectRateHeaders(await request(secondUrl).get('/contacts').set(bearer(other.secretKey)).expect(200), LIMIT - 1);
    const probe = await request(t.url).get('/healthz').expect(200);
    expect(probe.headers['ratelimit-limit']).toBeUndefined();
  });

  it('error responses after authentication carry the headers too', async () => {
    const p = await createProject(t, 'Headers on errors');
    const res = await request(t.url).get('/contacts/00000000-0000-4000-8000-000000000000').set(bearer(p.secretKey));
    expectMailError(res, 404, 'NOT_FOUND', 'contact not found');
    expectRateHeaders(res, LIMIT - 1);
    const invalid = await request(t.url).get('/contacts?limit=0').set(bearer(p.secretKey));
    expect(invalid.status).toBe(422);
    expectRateHeaders(invalid, LIMIT - 2);
  });
});

describe('mail rate limit when Redis goes away', () => {
  let redis: RedisServerHandle;
  let t: MailTestApp;
  beforeAll(async () => {
    redis = await startRedisServer();
    t = await startMailApp({ env: { REDIS_URL: redis.url, MAIL_RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
  });
  afterAll(async () => {
    await t.close();
    await redis.stop();
    // ioredis's disconnect() arms a 2 s timer that only a socket 'close' clears (see health.spec.ts).
    await new Promise((resolve) => setTimeout(resolve, 2100));
  });

  it('keeps serving, counting in memory per instance, and still enforces the limit', async () => {
    const p = await createProject(t, 'No Redis');
    expectRateHeaders(await request(t.url).get('/contacts').set(bearer(p.secretKey)).expect(200), LIMIT - 1);
    await redis.stop();
    for (let i = 0; i < LIMIT; i += 1) {
      const res = await request(t.url).post('/v1/track').set(bearer(p.secretKey)).send({ email: 'offline@example.com', event: 'x' });
      expect(res.status).toBe(200);
      expectRateHeaders(res, LIMIT - 1 - i);
    }
    const limited = await request(t.url).get('/contacts').set(bearer(p.secretKey));
    expectMailError(limited, 429, 'RATE_LIMIT_EXCEEDED', `rate limit exceeded: ${LIMIT} requests per minute per project`, {
      suggestion: /^retry after \d+ s$/,
    });
    // The public key's own budget is counted in memory too.
    const tracked = await request(t.url)
      .post('/v1/track')
      .set(bearer(p.publicKey))
      .send({ email: 'offline@example.com', event: 'x' })
      .expect(200);
    expectRateHeaders(tracked, LIMIT - 1);
  });
});
