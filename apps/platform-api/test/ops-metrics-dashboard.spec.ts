import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { QueueService } from '@app/service-kit';
import { findSamples, parsePrometheusText, queueBoardProblem, sampleValue, swaggerUiOperations } from '@app/service-kit/testing';
import { chromiumForSuite } from '@app/service-kit/testing/jest';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/**
 * `GET /metrics` (Prometheus text) and the queue dashboard at `/admin/queues` (super administrators
 * only), on the real app over real Postgres and Redis; the dashboard and Swagger UI rendered in Chromium.
 */
describe('platform-api operations: metrics and the queue dashboard', () => {
  let t: PlatformTestApp;
  let superAdmin: { token: string; auth: Record<string, string> };
  let everything: { auth: Record<string, string> };

  beforeAll(async () => {
    t = await startPlatformApp();
    const factories = Factories.of(t);
    superAdmin = await factories.loggedInUser(t, { isSuperAdmin: true });
    // Every feature ('*') is still not a super administrator.
    everything = await factories.loggedInUser(t, { features: ['*'] });
    const queues = t.app.get(QueueService);
    // Written before the first scrape (the queue list is cached for 30 s): a job waiting for two
    // minutes (BullMQ keeps the given creation time), a delayed one, and one of the other app's queues.
    await queues.add('platform-ops-probe', 'probe', {}, { timestamp: Date.now() - 120_000 });
    await queues.add('platform-ops-probe', 'later', {}, { delay: 3_600_000 });
    await queues.add('mail-ops-probe', 'probe', {});
  });
  afterAll(async () => {
    await t?.close();
  });

  async function scrape() {
    const res = await request(t.url).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return { text: res.text, samples: parsePrometheusText(res.text) };
  }

  it('serves /metrics without authentication, with the default process metrics', async () => {
    const { samples } = await scrape();
    expect(sampleValue(samples, 'process_cpu_seconds_total', { service: 'platform-api' })).toBeGreaterThan(0);
    expect(sampleValue(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(findSamples(samples, 'nodejs_heap_size_used_bytes')).toHaveLength(1);
  });

  it('labels request latency with the route pattern and status, never the raw URL or query', async () => {
    const id = randomUUID();
    const secret = `secret-${randomUUID()}`;
    await request(t.url).get(`/notifications/${id}/read`).set(superAdmin.auth); // wrong method for that route: unmatched
    await request(t.url).put(`/notifications/${id}/read`).set(superAdmin.auth).expect(404);
    await request(t.url).put(`/notifications/${id}/read`).expect(401);
    await request(t.url).get(`/auth/roles?search=${secret}`).set(superAdmin.auth).expect(200);
    const { text, samples } = await scrape();
    const count = (labels: Record<string, string>) => sampleValue(samples, 'http_request_duration_seconds_count', labels);
    expect(count({ method: 'PUT', route: '/notifications/:id/read', status_code: '404' })).toBe(1);
    expect(count({ method: 'PUT', route: '/notifications/:id/read', status_code: '401' })).toBe(1);
    expect(count({ method: 'GET', route: '/auth/roles', status_code: '200' })).toBe(1);
    expect(count({ method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    expect(text).not.toContain(id);
    expect(text).not.toContain(secret);
  });

  it('reports queue depth and the age of the oldest waiting job, for the platform queues only', async () => {
    const { samples } = await scrape();
    expect(sampleValue(samples, 'bullmq_queue_jobs', { queue: 'platform-ops-probe', state: 'waiting' })).toBe(1);
    expect(sampleValue(samples, 'bullmq_queue_jobs', { queue: 'platform-ops-probe', state: 'delayed' })).toBe(1);
    const age = sampleValue(samples, 'bullmq_queue_oldest_waiting_seconds', { queue: 'platform-ops-probe' });
    expect(age).toBeGreaterThanOrEqual(120);
    expect(age).toBeLessThan(3600);
    expect(findSamples(samples, 'bullmq_queue_jobs').filter((s) => !s.labels.queue.startsWith('platform-'))).toEqual([]);
  });

  it('refuses the dashboard to anonymous callers (401) and to anyone but a super administrator (403)', async () => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues', '/admin/queues/static/images/logo.svg']) {
      const anonymous = await request(t.url).get(path).expect(401);
      expect(anonymous.body).toEqual({ error: expect.any(String) });
      const forbidden = await request(t.url).get(path).set(everything.auth).expect(403);
      expect(forbidden.body).toEqual({ error: 'the queue dashboard is for super administrators' });
    }
    // Actions are refused the same way: no retry or clean without being a super administrator.
    await request(t.url).put('/admin/queues/api/queues/platform-ops-probe/pause').set(everything.auth).expect(403);
    await request(t.url).put('/admin/queues/api/queues/platform-ops-probe/pause').set('Authorization', 'Bearer not-a-jwt').expect(401);
  });

  it('opens the dashboard to a super administrator (bearer or cookie) with the platform queues only', async () => {
    const page = await request(t.url).get('/admin/queues').set('Cookie', `auth_token=${superAdmin.token}`).expect(200);
    expect(page.text).toContain('<base href="/admin/queues/" />');
    const api = await request(t.url).get('/admin/queues/api/queues').set(superAdmin.auth).expect(200);
    const queues = api.body.queues as { name: string; counts: Record<string, number> }[];
    expect(queues.find((q) => q.name === 'platform-ops-probe')?.counts).toMatchObject({ waiting: 1, delayed: 1 });
    expect(queues.map((q) => q.name).filter((n) => !n.startsWith('platform-'))).toEqual([]);
    const missing = await request(t.url).get('/admin/queues/api/nothing-here').set(superAdmin.auth).expect(404);
    expect(missing.body).toEqual({ error: expect.any(String) });
  });

  it('keeps /metrics and /admin/queues out of the OpenAPI document', async () => {
    const doc = await request(t.url).get('/openapi.json').expect(200);
    expect(Object.keys(doc.body.paths).filter((p) => p.startsWith('/metrics') || p.startsWith('/admin/queues'))).toEqual([]);
  });

  describe('in Chromium', () => {
    const chromium = chromiumForSuite();

    it("renders the queue dashboard with a super administrator's session cookie", async () => {
      const context = await chromium.browser.newContext();
      await context.addCookies([{ name: 'auth_token', value: superAdmin.token, url: t.url }]);
      expect(await queueBoardProblem(context, `${t.url}/admin/queues`, 'platform-ops-probe')).toBeNull();
      await context.close();
    }, 60_000);

    it('shows an anonymous browser the 401 body, not the board', async () => {
      const context = await chromium.browser.newContext();
      const page = await context.newPage();
      const response = await page.goto(`${t.url}/admin/queues`);
      expect(response?.status()).toBe(401);
      expect(await page.getByText('platform-ops-probe').count()).toBe(0);
      await context.close();
    }, 60_000);

    it('renders Swagger UI at /docs', async () => {
      expect(await swaggerUiOperations(chromium.browser, t.url, 'platform-api')).toBeGreaterThan(10);
    }, 60_000);
  });
});
