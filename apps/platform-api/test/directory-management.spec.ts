import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { lowestFreeSlug, slugFromName } from '../src/modules/directory/organization-slug.js';
import { Factories, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const TENANTS = 'directory.tenants.manage';
const ORGS = 'directory.organizations.manage';
type Auth = { Authorization: string };
type Tenant = { id: string; organizationId: string; slug: string };

describe('organization slugs', () => {
  it('derives a slug from the name', () => {
    expect(slugFromName('Acme Café GmbH')).toBe('acme-cafe-gmbh');
    expect(slugFromName('  --Hello,   World!-- ')).toBe('hello-world');
    expect(slugFromName('日本')).toBe('organization');
    expect(slugFromName('x'.repeat(80))).toHaveLength(56);
    expect(slugFromName(`${'a'.repeat(55)} b`)).toBe('a'.repeat(55));
  });

  it('picks the lowest free suffix', () => {
    expect(lowestFreeSlug('acme', [])).toBe('acme');
    expect(lowestFreeSlug('acme', ['acme', 'acme-3'])).toBe('acme-2');
    expect(lowestFreeSlug('acme', ['acme', 'acme-2'])).toBe('acme-3');
  });
});

describe('directory management', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let home: Tenant;
  let other: Tenant;
  let superAdmin: { auth: Auth };
  let admin: { auth: Auth };
  let otherAdmin: { auth: Auth };
  let plain: { auth: Auth };

  const api = (method: 'get' | 'post' | 'put' | 'delete', path: string, auth?: Auth) => {
    const req = request(t.url)[method](path);
    return auth ? req.set(auth) : req;
  };

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    home = await f.tenant(`Home ${randomUUID().slice(0, 6)}`);
    other = await f.tenant(`Other ${randomUUID().slice(0, 6)}`);
    superAdmin = await f.loggedInUser(t, { isSuperAdmin: true }, home);
    admin = await f.loggedInUser(t, { features: [TENANTS, ORGS] }, home);
    otherAdmin = await f.loggedInUser(t, { features: [TENANTS, ORGS] }, other);
    plain = await f.loggedInUser(t, { features: ['auth.roles.list'] }, home);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('/directory/tenants', () => {
    it('401 without a token, 403 without directory.tenants.manage', async () => {
      await api('get', '/directory/tenants').expect(401);
      const res = await api('get', '/directory/tenants', plain.auth).expect(403);
      expect(res.body).toEqual({ error: expect.stringContaining(TENANTS) });
      await api('post', '/directory/tenants', plain.auth).send({ name: 'x' }).expect(403);
      await api('put', '/directory/tenants', plain.auth).send({ id: home.id, name: 'x' }).expect(403);
      await api('delete', `/directory/tenants?id=${home.id}`, plain.auth).expect(403);
    });

    it('GET: a tenant administrator sees only its own tenant', async () => {
      const res = await api('get', '/directory/tenants', admin.auth).expect(200);
      expect(res.body).toEqual({
        items: [
          {
            id: home.id,
            name: expect.stringMatching(/^Home /),
            isActive: true,
            organizationsCount: 1,
            usersCount: 3,
            createdAt: expect.any(String),
          },
        ],
        total: 1,
        totalPages: 1,
        page: 1,
        pageSize: 50,
      });
      await api('get', `/directory/tenants?id=${other.id}`, admin.auth).expect(200, {
        items: [],
        total: 0,
        totalPages: 1,
        page: 1,
        pageSize: 50,
      });
    });

    it('GET: a super administrator sees every tenant, with id, search and paging', async () => {
      const all = await api('get', '/directory/tenants?pageSize=100', superAdmin.auth).expect(200);
      expect(all.body.items.map((i: { id: string }) => i.id)).toEqual(expect.arrayContaining([home.id, other.id]));
      const byId = await api('get', `/directory/tenants?id=${other.id}`, superAdmin.auth).expect(200);
      expect(byId.body.items.map((i: { id: string }) => i.id)).toEqual([other.id]);
      const marker = randomUUID().slice(0, 8);
      for (const n of [1, 2, 3]) await f.tenant(`Paged_${marker} ${n}`);
      await f.tenant(`Paged${marker}x`); // `_` is matched literally, not as a wildcard
      const page2 = await api('get', `/directory/tenants?search=paged_${marker}&pageSize=2&page=2`, superAdmin.auth).expect(200);
      expect(page2.body).toMatchObject({ total: 3, totalPages: 2, page: 2, pageSize: 2 });
      expect(page2.body.items.map((i: { name: string }) => i.name)).toEqual([`Paged_${marker} 3`]);
    });

    it('GET: 400 for invalid list parameters', async () => {
      for (const query of ['pageSize=101', 'pageSize=0', 'page=0', 'page=x', 'id=nope']) {
        const res = await api('get', `/directory/tenants?${query}`, superAdmin.auth);
        expect([query, res.status]).toEqual([query, 400]);
      }
      await api('get', '/directory/tenants?pageSize=100', superAdmin.auth).expect(200);
    });

    it('POST: a super administrator creates a tenant (201 {id}) and nothing else', async () => {
      const res = await api('post', '/directory/tenants', superAdmin.auth).send({ name: '  New Co  ' }).expect(201);
      expect(res.body).toEqual({ id: expect.any(String) });
      const [row] = await ds.query('SELECT name, is_active FROM tenants WHERE id = $1', [res.body.id]);
      expect(row).toEqual({ name: 'New Co', is_active: true });
      const [{ count }] = await ds.query('SELECT count(*)::int AS count FROM organizations WHERE tenant_id = $1', [res.body.id]);
      expect(count).toBe(0);
      await request(t.url).get(`/directory/tenants/lookup?tenantId=${res.body.id}`).set('X-Forwarded-For', testIp()).expect(200);
    });

    it('POST: 403 for anyone else, 400 for a blank name', async () => {
      const res = await api('post', '/directory/tenants', admin.auth).send({ name: 'Mine' }).expect(403);
      expect(res.body).toEqual({ error: 'only super administrators may create tenants' });
      await api('post', '/directory/tenants', superAdmin.auth).send({ name: '   ' }).expect(400);
      await api('post', '/directory/tenants', superAdmin.auth).send({}).expect(400);
    });

    it('PUT: a tenant administrator renames its own tenant; another tenant is 404; isActive is 403', async () => {
      await api('put', '/directory/tenants', admin.auth).send({ id: home.id, name: 'Home renamed' }).expect(200, { ok: true });
      expect((await ds.query('SELECT name FROM tenants WHERE id = $1', [home.id]))[0].name).toBe('Home renamed');
      await api('put', '/directory/tenants', admin.auth)
        .send({ id: other.id, name: 'Taken over' })
        .expect(404, { error: 'tenant not found' });
      expect((await ds.query('SELECT name FROM tenants WHERE id = $1', [other.id]))[0].name).not.toBe('Taken over');
      await api('put', '/directory/tenants', admin.auth).send({ id: home.id, isActive: false }).expect(403);
    });

    it('PUT: a super administrator (de)activates another tenant; not its own; 400 and 404 cases', async () => {
      const target = await f.tenant();
      await api('put', '/directory/tenants', superAdmin.auth).send({ id: target.id, isActive: false }).expect(200, { ok: true });
      await request(t.url).get(`/directory/tenants/lookup?tenantId=${target.id}`).set('X-Forwarded-For', testIp()).expect(404);
      await api('put', '/directory/tenants', superAdmin.auth)
        .send({ id: home.id, isActive: false })
        .expect(400, { error: 'cannot deactivate your own tenant' });
      await api('put', '/directory/tenants', superAdmin.auth).send({ id: randomUUID(), name: 'x' }).expect(404);
      await api('put', '/directory/tenants', superAdmin.auth).send({ id: target.id }).expect(400);
      await api('put', '/directory/tenants', superAdmin.auth).send({ id: 'x', name: 'y' }).expect(400);
    });

    it('DELETE: super administrators only; 400 while users remain or for the own tenant; 404 unknown', async () => {
      await api('delete', `/directory/tenants?id=${other.id}`, admin.auth).expect(403);
      await api('delete', `/directory/tenants?id=${other.id}`, superAdmin.auth).expect(400, { error: 'tenant still has users' });
      await api('delete', `/directory/tenants?id=${home.id}`, superAdmin.auth).expect(400, { error: 'cannot delete your own tenant' });
      const empty = await f.tenant();
      await api('delete', `/directory/tenants?id=${empty.id}`, superAdmin.auth).expect(200, { ok: true });
      expect(await ds.query('SELECT id FROM tenants WHERE id = $1', [empty.id])).toEqual([]);
      await api('delete', `/directory/tenants?id=${empty.id}`, superAdmin.auth).expect(404);
      await api('delete', '/directory/tenants', superAdmin.auth).expect(400);
      await api('delete', '/directory/tenants?id=abc', superAdmin.auth).expect(400);
    });
  });

  describe('/directory/organizations', () => {
    it('401 without a token, 403 without directory.organizations.manage', async () => {
      await api('get', '/directory/organizations').expect(401);
      await api('get', '/directory/organizations', plain.auth).expect(403);
      await api('post', '/directory/organizations', plain.auth).send({ name: 'x' }).expect(403);
      await api('put', '/directory/organizations', plain.auth).send({ id: home.organizationId, name: 'x' }).expect(403);
      await api('delete', `/directory/organizations?id=${home.organizationId}`, plain.auth).expect(403);
    });

    it('GET: only the caller’s tenant; a super administrator sees all and may filter by tenant', async () => {
      const mine = await api('get', '/directory/organizations', admin.auth).expect(200);
      expect(mine.body.items.every((o: { tenantId: string }) => o.tenantId === home.id)).toBe(true);
      expect(mine.body.items.map((o: { id: string }) => o.id)).toContain(home.organizationId);
      expect(mine.body.items.map((o: { id: string }) => o.id)).not.toContain(other.organizationId);
      expect(mine.body.items[0]).toEqual({
        id: expect.any(String),
        tenantId: home.id,
        tenantName: expect.any(String),
        name: expect.any(String),
        slug: expect.any(String),
        isActive: expect.any(Boolean),
        usersCount: expect.any(Number),
        createdAt: expect.any(String),
      });
      await api('get', `/directory/organizations?id=${other.organizationId}`, admin.auth).expect(200, {
        items: [],
        total: 0,
        totalPages: 1,
        page: 1,
        pageSize: 50,
      });
      await api('get', `/directory/organizations?tenantId=${other.id}`, admin.auth).expect(200, {
        items: [],
        total: 0,
        totalPages: 1,
        page: 1,
        pageSize: 50,
      });
      const theirs = await api('get', `/directory/organizations?tenantId=${other.id}`, superAdmin.auth).expect(200);
      expect(theirs.body.items.map((o: { id: string }) => o.id)).toEqual([other.organizationId]);
      const bySlug = await api('get', `/directory/organizations?search=${home.slug.toUpperCase()}`, admin.auth).expect(200);
      expect(bySlug.body.items.map((o: { id: string }) => o.id)).toEqual([home.organizationId]);
      await api('get', '/directory/organizations?pageSize=101', admin.auth).expect(400);
    });

    it('POST: 201 {id}; the slug is derived from the name and made unique', async () => {
      const name = `Acme Café ${randomUUID().slice(0, 6)}`;
      const first = await api('post', '/directory/organizations', admin.auth).send({ name }).expect(201);
      expect(first.body).toEqual({ id: expect.any(String) });
      const second = await api('post', '/directory/organizations', otherAdmin.auth).send({ name }).expect(201);
      const rows = await ds.query('SELECT id, tenant_id, slug FROM organizations WHERE id = ANY($1::uuid[])', [
        [first.body.id, second.body.id],
      ]);
      const slugOf = (id: string) => rows.find((r: { id: string }) => r.id === id);
      const base = slugFromName(name);
      expect(slugOf(first.body.id)).toEqual({ id: first.body.id, tenant_id: home.id, slug: base });
      expect(slugOf(second.body.id)).toEqual({ id: second.body.id, tenant_id: other.id, slug: `${base}-2` });
    });

    it('POST: concurrent creates with the same name get distinct slugs', async () => {
      const name = `Rush ${randomUUID().slice(0, 6)}`;
      const results = await Promise.all([1, 2, 3, 4].map(() => api('post', '/directory/organizations', admin.auth).send({ name })));
      expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201]);
      const rows = await ds.query('SELECT slug FROM organizations WHERE name = $1 ORDER BY slug', [name]);
      const base = slugFromName(name);
      expect(rows.map((r: { slug: string }) => r.slug)).toEqual([base, `${base}-2`, `${base}-3`, `${base}-4`]);
    });

    it('POST: an explicit slug taken (in any tenant) is 400; a malformed one is 400', async () => {
      await api('post', '/directory/organizations', admin.auth)
        .send({ name: 'Copy', slug: other.slug })
        .expect(400, { error: 'slug already in use' });
      await api('post', '/directory/organizations', admin.auth).send({ name: 'Bad', slug: 'Bad_Slug' }).expect(400);
      await api('post', '/directory/organizations', admin.auth).send({ slug: 'no-name' }).expect(400);
      const slug = `own-${randomUUID().slice(0, 8)}`;
      const ok = await api('post', '/directory/organizations', admin.auth).send({ name: 'Own slug', slug }).expect(201);
      const res = await request(t.url).get(`/directory/organizations/lookup?slug=${slug}`).set('X-Forwarded-For', testIp()).expect(200);
      expect(res.body.organization).toEqual({ id: ok.body.id, name: 'Own slug', slug });
    });

    it('POST: only a super administrator may name another tenant (403); an unknown tenant is 404', async () => {
      await api('post', '/directory/organizations', admin.auth).send({ name: 'Intruder', tenantId: other.id }).expect(403);
      await api('post', '/directory/organizations', admin.auth).send({ name: 'Same tenant', tenantId: home.id }).expect(201);
      const created = await api('post', '/directory/organizations', superAdmin.auth)
        .send({ name: 'Branch', tenantId: other.id })
        .expect(201);
      expect((await ds.query('SELECT tenant_id FROM organizations WHERE id = $1', [created.body.id]))[0].tenant_id).toBe(other.id);
      await api('post', '/directory/organizations', superAdmin.auth)
        .send({ name: 'Ghost', tenantId: randomUUID() })
        .expect(404, { error: 'tenant not found' });
    });

    it('PUT: updates name, slug and isActive; another tenant’s organization is 404; a taken slug 400', async () => {
      const { body } = await api('post', '/directory/organizations', admin.auth).send({ name: 'Editable' }).expect(201);
      const slug = `edited-${randomUUID().slice(0, 8)}`;
      await api('put', '/directory/organizations', admin.auth).send({ id: body.id, name: 'Edited', slug }).expect(200, { ok: true });
      expect(await ds.query('SELECT name, slug, is_active FROM organizations WHERE id = $1', [body.id])).toEqual([
        { name: 'Edited', slug, is_active: true },
      ]);
      await api('put', '/directory/organizations', admin.auth)
        .send({ id: body.id, slug: other.slug })
        .expect(400, { error: 'slug already in use' });
      await api('put', '/directory/organizations', admin.auth).send({ id: body.id, isActive: false }).expect(200);
      await request(t.url).get(`/directory/organizations/lookup?slug=${slug}`).set('X-Forwarded-For', testIp()).expect(404);
      await api('put', '/directory/organizations', admin.auth)
        .send({ id: other.organizationId, name: 'Hijacked' })
        .expect(404, { error: 'organization not found' });
      expect((await ds.query('SELECT name FROM organizations WHERE id = $1', [other.organizationId]))[0].name).not.toBe('Hijacked');
      await api('put', '/directory/organizations', superAdmin.auth).send({ id: other.organizationId, name: 'By super admin' }).expect(200);
      await api('put', '/directory/organizations', admin.auth).send({ id: body.id }).expect(400);
      await api('put', '/directory/organizations', admin.auth).send({ id: body.id, slug: '-bad' }).expect(400);
    });

    it('DELETE: 400 while users belong to it, 200 once empty, 404 across tenants or unknown', async () => {
      await api('delete', `/directory/organizations?id=${home.organizationId}`, admin.auth).expect(400, {
        error: 'organization still has users',
      });
      const { body } = await api('post', '/directory/organizations', otherAdmin.auth).send({ name: 'Disposable' }).expect(201);
      await api('delete', `/directory/organizations?id=${body.id}`, admin.auth).expect(404);
      await api('delete', `/directory/organizations?id=${body.id}`, otherAdmin.auth).expect(200, { ok: true });
      await api('delete', `/directory/organizations?id=${body.id}`, otherAdmin.auth).expect(404);
      await api('delete', '/directory/organizations', otherAdmin.auth).expect(400);
    });

    it('a caller restricted to some organizations sees only those and gets 403 on the others', async () => {
      const tenant = await f.tenant();
      const [extra] = await ds.query(`INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'Extra', $2) RETURNING id`, [
        tenant.id,
        `extra-${randomUUID().slice(0, 8)}`,
      ]);
      const restricted = await f.loggedInUser(t, { features: [ORGS], organizations: [tenant.organizationId] }, tenant);
      const res = await api('get', '/directory/organizations', restricted.auth).expect(200);
      expect(res.body.items.map((o: { id: string }) => o.id)).toEqual([tenant.organizationId]);
      await api('put', '/directory/organizations', restricted.auth).send({ id: extra.id, name: 'No' }).expect(403);
      await api('delete', `/directory/organizations?id=${extra.id}`, restricted.auth).expect(403);
    });
  });
});
