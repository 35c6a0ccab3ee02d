import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { startRedisServer, type RedisServerHandle } from '@app/service-kit/testing';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

describe('probes', () => {
  let t: PlatformTestApp;
  beforeAll(async () => {
    t = await startPlatformApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('GET /healthz answers 200 with a fresh X-Request-Id', async () => {
    const res = await request(t.url).get('/healthz').expect(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('echoes a valid incoming X-Request-Id and replaces an invalid one', async () => {
    const echoed = await request(t.url).get('/healthz').set('X-Request-Id', 'abc-123.trace:1').expect(200);
    expect(echoed.headers['x-request-id']).toBe('abc-123.trace:1');
    const replaced = await request(t.url).get('/healthz').set('X-Request-Id', 'bad id <script>').expect(200);
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('GET /readyz answers 200 when Postgres and Redis answer', async () => {
    const res = await request(t.url).get('/readyz').expect(200);
    expect(res.body).toEqual({ status: 'ok', checks: { database: 'ok', redis: 'ok' } });
  });

  it('serves the OpenAPI document and Swagger UI', async () => {
    const doc = await request(t.url).get('/openapi.json').expect(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/healthz', '/readyz']));
    const ui = await request(t.url).get('/docs').redirects(1).expect(200);
    expect(ui.text).toContain('swagger');
  });
});

describe('readiness without Redis', () => {
  let redis: RedisServerHandle;
  let t: PlatformTestApp;
  beforeAll(async () => {
    redis = await startRedisServer();
    t = await startPlatformApp({ env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await t.close();
    await redis.stop();
  });

  it('turns 503 in the platform error shape when Redis goes away, while /healthz stays 200', async () => {
    await request(t.url).get('/readyz').expect(200);
    await redis.stop();
    const res = await request(t.url).get('/readyz').expect(503);
    expect(res.body).toEqual({ error: 'not ready: redis unavailable' });
    await request(t.url).get('/healthz').expect(200);
  });
});
