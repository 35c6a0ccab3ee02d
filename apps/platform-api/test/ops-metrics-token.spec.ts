import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { metricsLabelLeaks, parsePrometheusText, sampleValue } from '@app/service-kit/testing';
import { workerMetricsRefusalProblems, workerMetricsUrl, wrongMetricsAuthorizations } from '@app/service-kit/testing';
import { Factories } from './support/factories.js';
import { processEnv, startWorkerProcess, type WorkerProcess } from './support/app-process.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const METRICS_TOKEN = `metrics-${randomBytes(16).toString('hex')}`;
const WRONG = wrongMetricsAuthorizations(METRICS_TOKEN);

/**
 * decisions.md "Operator contract", metrics: with `METRICS_TOKEN` set, `GET /metrics` on the API port
 * and on the worker's port needs `Authorization: Bearer <token>` (401 otherwise), and no label value
 * is a tenant or user id. The API and the compiled worker (`dist/worker.js`) over HTTP.
 */
describe('platform-api /metrics behind METRICS_TOKEN', () => {
  let t: PlatformTestApp;
  let worker: WorkerProcess | undefined;
  let user: { auth: Record<string, string> };
  let tenantId: string;

  beforeAll(async () => {
    t = await startPlatformApp({ env: { METRICS_TOKEN } });
    const factories = Factories.of(t);
    tenantId = (await factories.tenant()).id;
    user = await factories.loggedInUser(t, { isSuperAdmin: true });
    worker = startWorkerProcess('metrics-token', processEnv(t.config, { PLATFORM_WORKER_METRICS_PORT: '0', METRICS_TOKEN }));
    await worker.ready;
  }, 60_000);
  afterAll(async () => {
    await worker?.kill();
    await t?.close();
  });

  const workerUrl = () => workerMetricsUrl(worker?.output() ?? '');

  it('refuses the API port without the bearer token, even to a super administrator (401, Bearer challenge)', async () => {
    for (const authorization of WRONG) {
      const req = request(t.url).get('/metrics');
      const res = authorization === undefined ? await req : await req.set('Authorization', authorization);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: expect.stringMatching(/METRICS_TOKEN/) });
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    }
    const session = await request(t.url).get('/metrics').set(user.auth);
    expect(session.status).toBe(401);
  });

  it('refuses the worker port without the bearer token (401), its probes stay open', async () => {
    expect(await workerMetricsRefusalProblems(workerUrl(), METRICS_TOKEN)).toEqual([]);
  });

  it('serves both ports with the token, and no label value is a tenant or user id', async () => {
    await request(t.url).get('/auth/roles').set(user.auth).expect(200);
    const api = await request(t.url).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
    expect(
      sampleValue(parsePrometheusText(api.text), 'http_request_duration_seconds_count', { route: '/auth/roles', status_code: '200' }),
    ).toBe(1);
    const res = await fetch(`${workerUrl()}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    const workerText = await res.text();
    expect(sampleValue(parsePrometheusText(workerText), 'process_cpu_seconds_total', { service: 'platform-worker' })).toBeGreaterThan(0);
    expect(metricsLabelLeaks([api.text, workerText], [tenantId], /project|campaign|tenant|organization|user/)).toEqual([]);
  });
});
