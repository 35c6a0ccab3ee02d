import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { startRedisServer, type RedisServerHandle } from '@app/service-kit/testing';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('mail probes and docs', () => {
  let t: MailTestApp;
  beforeAll(async () => {
    t = await startMailApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('GET /healthz answers 200 with a fresh X-Request-Id', async () => {
    const res = await request(t.url).get('/healthz').expect(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['x-request-id']).toMatch(UUID);
  });

  it('echoes a valid incoming X-Request-Id and replaces an invalid one', async () => {
    const echoed = await request(t.url).get('/healthz').set('X-Request-Id', 'abc-123.trace:1').expect(200);
    expect(echoed.headers['x-request-id']).toBe('abc-123.trace:1');
    const replaced = await request(t.url).get('/healthz').set('X-Request-Id', 'bad id <script>').expect(200);
    expect(replaced.headers['x-request-id']).toMatch(UUID);
  });

  it('GET /readyz answers 200 when Postgres and Redis answer', async () => {
    const res = await request(t.url).get('/readyz').expect(200);
    expect(res.body).toEqual({ status: 'ok', checks: { database: 'ok', redis: 'ok' } });
  });

  it('serves the OpenAPI document, describing the error envelope and the key auth', async () => {
    const doc = await request(t.url).get('/openapi.json').expect(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(doc.body.info.title).toBe('mail-api');
    expect(doc.body.info.description).toContain('{success: false, error: {code, message, statusCode, requestId');
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/healthz', '/readyz']));
    const schemes = Object.values<{ scheme: string; description: string }>(doc.body.components.securitySchemes);
    expect(schemes).toEqual([expect.objectContaining({ scheme: 'bearer' })]);
    expect(schemes[0].description).toMatch(/sk_.*pk_/);
  });

  it('serves Swagger UI at /docs', async () => {
    const ui = await request(t.url).get('/docs').redirects(1).expect(200);
    expect(ui.text).toContain('swagger');
  });
});

describe('mail readiness without Redis', () => {
  let redis: RedisServerHandle;
  let t: MailTestApp;
  beforeAll(async () => {
    redis = await startRedisServer();
    t = await startMailApp({ env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await t.close();
    await redis.stop();
    // ioredis's disconnect() arms a 2 s timer (not unref'd) that only a socket 'close' clears; a client
    // whose Redis is already gone never gets one. Let it run out so Jest exits cleanly.
    await new Promise((resolve) => setTimeout(resolve, 2100));
  });

  it('turns 503 NOT_READY in the mail envelope when Redis goes away, while /healthz stays 200', async () => {
    await request(t.url).get('/readyz').expect(200);
    await redis.stop();
    const res = await request(t.url).get('/readyz').expect(503);
    expect(res.body).toEqual({
      success: false,
      error: {
        code: 'NOT_READY',
        message: 'not ready: redis unavailable',
        statusCode: 503,
        requestId: res.headers['x-request-id'],
      },
      timestamp: expect.any(String),
      message: 'not ready: redis unavailable',
    });
    await request(t.url).get('/healthz').expect(200);
  });
});
