import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

describe('public directory lookups', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let tenant: { id: string; organizationId: string; slug: string };
  let tenantName: string;

  const tenantLookup = (query: string, ip = testIp()) => request(t.url).get(`/directory/tenants/lookup${query}`).set('X-Forwarded-For', ip);
  const orgLookup = (query: string, ip = testIp()) =>
    request(t.url).get(`/directory/organizations/lookup${query}`).set('X-Forwarded-For', ip);

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    tenantName = `Acme ${randomUUID().slice(0, 6)}`;
    tenant = await f.tenant(tenantName);
  });
  afterAll(async () => {
    await t.close();
  });

  it('GET /directory/tenants/lookup: {ok: true, tenant: {id, name}} without authentication', async () => {
    const res = await tenantLookup(`?tenantId=${tenant.id}`).expect(200);
    expect(res.body).toEqual({ ok: true, tenant: { id: tenant.id, name: tenantName } });
  });

  it('tenant lookup: 404 {ok: false, error} for an unknown or inactive tenant', async () => {
    await tenantLookup(`?tenantId=${randomUUID()}`).expect(404, { ok: false, error: 'tenant not found' });
    const inactive = await f.tenant();
    await ds.query('UPDATE tenants SET is_active = false WHERE id = $1', [inactive.id]);
    await tenantLookup(`?tenantId=${inactive.id}`).expect(404, { ok: false, error: 'tenant not found' });
  });

  it('tenant lookup: 400 {ok: false, error} when tenantId is missing or not a UUID', async () => {
    await tenantLookup('').expect(400, { ok: false, error: 'tenantId is required' });
    await tenantLookup('?tenantId=').expect(400, { ok: false, error: 'tenantId is required' });
    await tenantLookup('?tenantId=abc').expect(400, { ok: false, error: 'tenantId must be a UUID' });
    await tenantLookup(`?tenantId=${tenant.id}&tenantId=${tenant.id}`).expect(400, { ok: false, error: 'tenantId must be a UUID' });
  });

  it('GET /directory/organizations/lookup: {ok: true, organization: {id, name, slug}} by slug', async () => {
    const res = await orgLookup(`?slug=${tenant.slug}`).expect(200);
    expect(res.body).toEqual({ ok: true, organization: { id: tenant.organizationId, name: `${tenantName} Org`, slug: tenant.slug } });
  });

  it('organization lookup: 404 for an unknown slug, an inactive organization or one of an inactive tenant', async () => {
    await orgLookup('?slug=no-such-org').expect(404, { ok: false, error: 'organization not found' });
    const inactiveOrg = await f.tenant();
    await ds.query('UPDATE organizations SET is_active = false WHERE id = $1', [inactiveOrg.organizationId]);
    await orgLookup(`?slug=${inactiveOrg.slug}`).expect(404, { ok: false, error: 'organization not found' });
    const inactiveTenant = await f.tenant();
    await ds.query('UPDATE tenants SET is_active = false WHERE id = $1', [inactiveTenant.id]);
    await orgLookup(`?slug=${inactiveTenant.slug}`).expect(404, { ok: false, error: 'organization not found' });
  });

  it('organization lookup: 400 when the slug is missing or malformed', async () => {
    await orgLookup('').expect(400, { ok: false, error: 'slug is required' });
    const malformed = { ok: false, error: 'slug must match ^[a-z0-9][a-z0-9-]{0,62}$' };
    for (const slug of ['Upper', '-leading', 'under_score', 'a'.repeat(64), 'sp%20ace']) {
      await orgLookup(`?slug=${slug}`).expect(400, malformed);
    }
    await orgLookup(`?slug=${'a'.repeat(63)}`).expect(404);
  });

  it('60 lookups per minute per IP, both lookups together: the 61st is 429 {error} with Retry-After', async () => {
    const ip = testIp();
    for (let i = 0; i < 30; i += 1) {
      await tenantLookup(`?tenantId=${tenant.id}`, ip).expect(200);
      // Malformed requests count too.
      await orgLookup(i % 2 ? `?slug=${tenant.slug}` : '?slug=BAD', ip).expect(i % 2 ? 200 : 400);
    }
    const limited = await orgLookup(`?slug=${tenant.slug}`, ip).expect(429);
    expect(limited.body).toEqual({ error: expect.any(String) });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    await tenantLookup(`?tenantId=${tenant.id}`, ip).expect(429);
    // Another client is unaffected.
    await tenantLookup(`?tenantId=${tenant.id}`).expect(200);
  });
});
