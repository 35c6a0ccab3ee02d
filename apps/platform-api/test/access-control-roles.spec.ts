import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;
const UNKNOWN_ID = '5b6c9a8e-1f2d-4c3b-9a7e-0d1c2b3a4f5e';
const MANAGER = ['auth.roles.*'];

describe('roles: GET/POST/PUT/DELETE /auth/roles', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  /** Tag names so lists can be narrowed with `search` (other tests' roles share the database). */
  const tag = () => `t${randomUUID().slice(0, 8)}`;
  const list = (auth: Auth, query: object) => request(t.url).get('/auth/roles').set(auth).query(query);
  const roleRow = async (id: string) =>
    (await ds.query('SELECT id, tenant_id, name FROM roles WHERE id = $1', [id]))[0] as
      { id: string; tenant_id: string | null; name: string } | undefined;

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t.close();
  });

  it('documents every route in OpenAPI (tag auth, bearer auth, request and response schemas)', async () => {
    const doc = (await request(t.url).get('/openapi.json').expect(200)).body;
    const operations = [
      ['/auth/roles', 'get'],
      ['/auth/roles', 'post'],
      ['/auth/roles', 'put'],
      ['/auth/roles', 'delete'],
      ['/auth/roles/acl', 'get'],
      ['/auth/roles/acl', 'put'],
      ['/auth/users/acl', 'get'],
      ['/auth/users/acl', 'put'],
    ];
    for (const [path, method] of operations) {
      const op = doc.paths[path]?.[method];
      expect(op).toBeDefined();
      expect(op.tags).toContain('auth');
      expect(op.security?.length).toBeGreaterThan(0);
      expect(op.description).toEqual(expect.any(String));
    }
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas.CreateRoleDto.properties)).toEqual(expect.arrayContaining(['name', 'tenantId']));
    expect(Object.keys(schemas.UpdateUserAclDto.properties)).toEqual(
      expect.arrayContaining(['userId', 'features', 'isSuperAdmin', 'organizations']),
    );
    expect(Object.keys(schemas.RoleItemDto.properties)).toEqual(['id', 'name', 'usersCount', 'tenantId', 'tenantName']);
    expect(doc.paths['/auth/roles'].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['id', 'page', 'pageSize', 'search', 'tenantId']),
    );
  });

  describe('authentication and features', () => {
    it('401 {error} without a token on every route', async () => {
      for (const r of [
        request(t.url).get('/auth/roles'),
        request(t.url).post('/auth/roles').send({ name: 'x' }),
        request(t.url).put('/auth/roles').send({ id: UNKNOWN_ID, name: 'x' }),
        request(t.url).delete(`/auth/roles?id=${UNKNOWN_ID}`),
      ]) {
        const res = await r.expect(401);
        expect(res.body).toEqual({ error: expect.any(String) });
      }
    });

    it('403 {error}: listing needs auth.roles.list, writes need auth.roles.manage', async () => {
      const nobody = await f.loggedInUser(t, { features: ['auth.acl.manage'] });
      expect((await request(t.url).get('/auth/roles').set(nobody.auth).expect(403)).body).toEqual({
        error: expect.stringContaining('auth.roles.list'),
      });
      const reader = await f.loggedInUser(t, { features: ['auth.roles.list'] });
      await request(t.url).get('/auth/roles').set(reader.auth).expect(200);
      const own = await f.role(reader.tenant.id, {});
      for (const r of [
        request(t.url).post('/auth/roles').set(reader.auth).send({ name: tag() }),
        request(t.url).put('/auth/roles').set(reader.auth).send({ id: own.id, name: tag() }),
        request(t.url).delete(`/auth/roles?id=${own.id}`).set(reader.auth),
      ]) {
        expect((await r.expect(403)).body).toEqual({ error: expect.stringContaining('auth.roles.manage') });
      }
      expect(await roleRow(own.id)).toMatchObject({ name: own.name });
    });
  });

  describe('GET /auth/roles', () => {
    it('lists the tenant’s roles and global roles with usersCount, never another tenant’s roles', async () => {
      const name = tag();
      const tenantA = await f.tenant();
      const tenantB = await f.tenant();
      const admin = await f.loggedInUser(t, { features: MANAGER }, tenantA);
      const editors = await f.role(tenantA.id, {}, { name: `${name} editors` });
      const empty = await f.role(tenantA.id, {}, { name: `${name} empty` });
      const global = await f.role(null, {}, { name: `${name} global`, aclTenantId: tenantA.id });
      const foreign = await f.role(tenantB.id, {}, { name: `${name} foreign` });
      await f.user(tenantA, { roleIds: [editors.id, global.id] });
      await f.user(tenantA, { roleIds: [editors.id] });
      const gone = await f.user(tenantA, { roleIds: [editors.id] });
      await ds.query('UPDATE users SET deleted_at = now() WHERE id = $1', [gone.id]);
      await f.user(tenantB, { roleIds: [foreign.id, global.id] });
      await f.user(tenantB, { roleIds: [global.id] });

      const res = await list(admin.auth, { search: name }).expect(200);
      expect(res.body).toEqual({
        items: [
          { id: editors.id, name: `${name} editors`, usersCount: 2, tenantId: tenantA.id, tenantName: expect.any(String) },
          { id: empty.id, name: `${name} empty`, usersCount: 0, tenantId: tenantA.id, tenantName: expect.any(String) },
          // A global role counts its memberships in the caller's tenant only.
          { id: global.id, name: `${name} global`, usersCount: 1, tenantId: null, tenantName: null },
        ],
        total: 3,
        totalPages: 1,
        page: 1,
        pageSize: 50,
      });
      const [tenantRow] = await ds.query('SELECT name FROM tenants WHERE id = $1', [tenantA.id]);
      expect(res.body.items[0].tenantName).toBe(tenantRow.name);

      const everything = await list(admin.auth, { pageSize: 100 }).expect(200);
      expect(everything.body.items.length).toBeGreaterThan(0);
      for (const item of everything.body.items) expect([tenantA.id, null]).toContain(item.tenantId);
      expect(everything.body.items.map((i: { id: string }) => i.id)).not.toContain(foreign.id);

      // A tenantId filter naming another tenant finds nothing; the caller's own tenant is fine.
      expect((await list(admin.auth, { tenantId: tenantB.id }).expect(200)).body).toMatchObject({ items: [], total: 0 });
      expect((await list(admin.auth, { search: name, tenantId: tenantA.id }).expect(200)).body.total).toBe(3);
      // The id filter, scoped like everything else.
      expect((await list(admin.auth, { id: editors.id }).expect(200)).body.items).toEqual([
        expect.objectContaining({ id: editors.id, usersCount: 2 }),
      ]);
      expect((await list(admin.auth, { id: foreign.id }).expect(200)).body).toMatchObject({ items: [], total: 0 });
    });

    it('search is a case-insensitive substring match with LIKE metacharacters taken literally', async () => {
      const name = tag();
      const admin = await f.loggedInUser(t, { features: MANAGER });
      await f.role(admin.tenant.id, {}, { name: `${name} Alpha Editor` });
      await f.role(admin.tenant.id, {}, { name: `${name} alpha viewer` });
      await f.role(admin.tenant.id, {}, { name: `${name} 100% beta` });
      await f.role(admin.tenant.id, {}, { name: `${name} under_score` });
      const names = async (search: string) =>
        (await list(admin.auth, { search }).expect(200)).body.items.map((i: { name: string }) => i.name);
      expect(await names(`${name} ALPHA`)).toEqual([`${name} Alpha Editor`, `${name} alpha viewer`]);
      expect(await names(`${name.toUpperCase()} alpha v`)).toEqual([`${name} alpha viewer`]);
      expect(await names(`${name} 100%`)).toEqual([`${name} 100% beta`]);
      expect(await names(`${name} %`)).toEqual([]);
      expect(await names(`${name} under_`)).toEqual([`${name} under_score`]);
      expect(await names(`${name} under_x`)).toEqual([]);
    });

    it('pages: page and pageSize, totalPages, past the last page; pageSize above 100 and bad values are 400', async () => {
      const name = tag();
      const admin = await f.loggedInUser(t, { features: ['auth.roles.list'] });
      for (let i = 1; i <= 5; i += 1) await f.role(admin.tenant.id, {}, { name: `${name} r${i}` });
      const page = async (p: number, size: number) => (await list(admin.auth, { search: name, page: p, pageSize: size }).expect(200)).body;
      const first = await page(1, 2);
      expect(first).toMatchObject({ total: 5, totalPages: 3, page: 1, pageSize: 2 });
      expect(first.items.map((i: { name: string }) => i.name)).toEqual([`${name} r1`, `${name} r2`]);
      expect((await page(3, 2)).items.map((i: { name: string }) => i.name)).toEqual([`${name} r5`]);
      expect(await page(4, 2)).toEqual({ items: [], total: 5, totalPages: 3, page: 4, pageSize: 2 });
      expect((await page(1, 100)).items).toHaveLength(5);
      expect((await list(admin.auth, { search: `${name} none` }).expect(200)).body).toEqual({
        items: [],
        total: 0,
        totalPages: 1,
        page: 1,
        pageSize: 50,
      });

      for (const query of [
        { pageSize: 101 },
        { pageSize: 0 },
        { pageSize: 'many' },
        { page: 0 },
        { page: -1 },
        { page: 1.5 },
        { id: 'not-a-uuid' },
        { tenantId: 'nope' },
      ]) {
        const res = await list(admin.auth, query).expect(400);
        expect(res.body).toMatchObject({ error: expect.any(String) });
      }
    });

    it('super administrators see every tenant’s roles with tenantName, and may filter by tenant', async () => {
      const name = tag();
      const tenantA = await f.tenant(`A ${name}`);
      const tenantB = await f.tenant(`B ${name}`);
      const superAdmin = await f.loggedInUser(t, { isSuperAdmin: true });
      const roleA = await f.role(tenantA.id, {}, { name: `${name} a` });
      const roleB = await f.role(tenantB.id, {}, { name: `${name} b` });
      const global = await f.role(null, {}, { name: `${name} g` });
      await f.user(tenantA, { roleIds: [roleA.id, global.id] });
      await f.user(tenantB, { roleIds: [global.id] });
      await f.user(tenantB, { roleIds: [global.id, roleB.id] });

      const all = await list(superAdmin.auth, { search: name }).expect(200);
      expect(all.body.items).toEqual([
        { id: roleA.id, name: `${name} a`, usersCount: 1, tenantId: tenantA.id, tenantName: `A ${name}` },
        { id: roleB.id, name: `${name} b`, usersCount: 1, tenantId: tenantB.id, tenantName: `B ${name}` },
        { id: global.id, name: `${name} g`, usersCount: 3, tenantId: null, tenantName: null },
      ]);
      const onlyB = await list(superAdmin.auth, { search: name, tenantId: tenantB.id }).expect(200);
      expect(onlyB.body.items).toEqual([
        { id: roleB.id, name: `${name} b`, usersCount: 1, tenantId: tenantB.id, tenantName: `B ${name}` },
        { id: global.id, name: `${name} g`, usersCount: 2, tenantId: null, tenantName: null },
      ]);
      expect(onlyB.body.total).toBe(2);
    });
  });

  describe('POST /auth/roles', () => {
    it('creates a role of the caller’s tenant (201 {id}), name trimmed; duplicates in the same scope are 400', async () => {
      const name = tag();
      const admin = await f.loggedInUser(t, { features: MANAGER });
      const res = await request(t.url)
        .post('/auth/roles')
        .set(admin.auth)
        .send({ name: `  ${name} Editors  ` })
        .expect(201);
      expect(res.body).toEqual({ id: expect.any(String) });
      expect(await roleRow(res.body.id)).toEqual({ id: res.body.id, tenant_id: admin.tenant.id, name: `${name} Editors` });

      const own = await request(t.url)
        .post('/auth/roles')
        .set(admin.auth)
        .send({ name: `${name} own`, tenantId: admin.tenant.id })
        .expect(201);
      expect(await roleRow(own.body.id)).toMatchObject({ tenant_id: admin.tenant.id });

      const dup = await request(t.url)
        .post('/auth/roles')
        .set(admin.auth)
        .send({ name: `${name} EDITORS` })
        .expect(400);
      expect(dup.body).toEqual({ error: 'role name already exists' });
      // The same name in another tenant is another scope.
      const other = await f.loggedInUser(t, { features: MANAGER });
      await request(t.url)
        .post('/auth/roles')
        .set(other.auth)
        .send({ name: `${name} Editors` })
        .expect(201);
      expect(await ds.query('SELECT count(*)::int AS n FROM roles WHERE lower(name) = lower($1)', [`${name} editors`])).toEqual([{ n: 2 }]);
    });

    it('non super administrators cannot create roles of another tenant (403) nor global roles', async () => {
      const name = tag();
      const admin = await f.loggedInUser(t, { features: MANAGER });
      const elsewhere = await f.tenant();
      const res = await request(t.url).post('/auth/roles').set(admin.auth).send({ name, tenantId: elsewhere.id }).expect(403);
      expect(res.body).toEqual({ error: expect.any(String) });
      expect(await ds.query('SELECT 1 FROM roles WHERE name = $1', [name])).toEqual([]);
      const nullTenant = await request(t.url).post('/auth/roles').set(admin.auth).send({ name, tenantId: null }).expect(201);
      expect(await roleRow(nullTenant.body.id)).toMatchObject({ tenant_id: admin.tenant.id });
    });

    it('400 {error} for invalid payloads', async () => {
      const admin = await f.loggedInUser(t, { features: MANAGER });
      for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(101) }, { name: 42 }, { name: tag(), tenantId: 'nope' }]) {
        const res = await request(t.url).post('/auth/roles').set(admin.auth).send(body).expect(400);
        expect(res.body).toMatchObject({ error: expect.any(String) });
      }
      await request(t.url)
        .post('/auth/roles')
        .set(admin.auth)
        .send({ name: `${tag()}${'x'.repeat(91)}` })
        .expect(201);
    });

    it('super administrators create global roles (tenantId omitted) and roles of any existing tenant', async () => {
      const name = tag();
      const superAdmin = await f.loggedInUser(t, { isSuperAdmin: true });
      const global = await request(t.url)
        .post('/auth/roles')
        .set(superAdmin.auth)
        .send({ name: `${name} global` })
        .expect(201);
      expect(await roleRow(global.body.id)).toMatchObject({ tenant_id: null, name: `${name} global` });
      const dup = await request(t.url)
        .post('/auth/roles')
        .set(superAdmin.auth)
        .send({ name: `${name} GLOBAL` })
        .expect(400);
      expect(dup.body).toEqual({ error: 'role name already exists' });

      const other = await f.tenant();
      const scoped = await request(t.url)
        .post('/auth/roles')
        .set(superAdmin.auth)
        .send({ name: `${name} global`, tenantId: other.id })
        .expect(201);
      expect(await roleRow(scoped.body.id)).toMatchObject({ tenant_id: other.id });
      const unknown = await request(t.url).post('/auth/roles').set(superAdmin.auth).send({ name, tenantId: UNKNOWN_ID }).expect(400);
      expect(unknown.body).toEqual({ error: 'tenant not found' });
    });
  });

  describe('PUT /auth/roles', () => {
    it('renames a role of the caller’s tenant (200 {ok: true}); duplicate 400; no name is a no-op', async () => {
      const name = tag();
      const admin = await f.loggedInUser(t, { features: MANAGER });
      const role = await f.role(admin.tenant.id, {}, { name: `${name} old` });
      await f.role(admin.tenant.id, {}, { name: `${name} taken` });
      const res = await request(t.url)
        .put('/auth/roles')
        .set(admin.auth)
        .send({ id: role.id, name: `  ${name} new ` })
        .expect(200);
      expect(res.body).toEqual({ ok: true });
      expect(await roleRow(role.id)).toMatchObject({ name: `${name} new` });
      const dup = await request(t.url)
        .put('/auth/roles')
        .set(admin.auth)
        .send({ id: role.id, name: `${name} TAKEN` })
        .expect(400);
      expect(dup.body).toEqual({ error: 'role name already exists' });
      await request(t.url)
        .put('/auth/roles')
        .set(admin.auth)
        .send({ id: role.id, name: `${name} NEW` })
        .expect(200);
      expect(await roleRow(role.id)).toMatchObject({ name: `${name} NEW` });
      await request(t.url).put('/auth/roles').set(admin.auth).send({ id: role.id }).expect(200);
      expect(await roleRow(role.id)).toMatchObject({ name: `${name} NEW` });
    });

    it('404 for another tenant’s role or an unknown id; 403 for a global or super-administrator role; 400 invalid', async () => {
      const admin = await f.loggedInUser(t, { features: MANAGER });
      const foreign = await f.role((await f.tenant()).id, {});
      for (const id of [foreign.id, UNKNOWN_ID]) {
        const res = await request(t.url).put('/auth/roles').set(admin.auth).send({ id, name: tag() }).expect(404);
        expect(res.body).toEqual({ error: 'role not found' });
      }
      expect(await roleRow(foreign.id)).toMatchObject({ name: foreign.name });

      const global = await f.role(null, {}, { aclTenantId: admin.tenant.id });
      expect((await request(t.url).put('/auth/roles').set(admin.auth).send({ id: global.id, name: tag() }).expect(403)).body).toEqual({
        error: expect.any(String),
      });
      const superRole = await f.role(admin.tenant.id, { isSuperAdmin: true });
      await request(t.url).put('/auth/roles').set(admin.auth).send({ id: superRole.id, name: tag() }).expect(403);
      expect(await roleRow(global.id)).toMatchObject({ name: global.name });
      expect(await roleRow(superRole.id)).toMatchObject({ name: superRole.name });

      for (const body of [{}, { id: 'nope', name: 'x' }, { id: foreign.id, name: '' }, { id: foreign.id, name: 'x'.repeat(101) }]) {
        const res = await request(t.url).put('/auth/roles').set(admin.auth).send(body).expect(400);
        expect(res.body).toMatchObject({ error: expect.any(String) });
      }
    });

    it('super administrators rename global roles and roles of any tenant', async () => {
      const superAdmin = await f.loggedInUser(t, { isSuperAdmin: true });
      const global = await f.role(null, {});
      const foreign = await f.role((await f.tenant()).id, {});
      const [g, r] = [tag(), tag()];
      await request(t.url).put('/auth/roles').set(superAdmin.auth).send({ id: global.id, name: g }).expect(200);
      await request(t.url).put('/auth/roles').set(superAdmin.auth).send({ id: foreign.id, name: r }).expect(200);
      expect(await roleRow(global.id)).toMatchObject({ name: g, tenant_id: null });
      expect(await roleRow(foreign.id)).toMatchObject({ name: r });
    });

    it('a rename shows at once in the holders’ resolved roles (cache invalidated)', async () => {
      const admin = await f.loggedInUser(t, { features: MANAGER });
      const before = await request(t.url).get('/auth/profile').set(admin.auth).expect(200);
      expect(before.body.roles).toEqual([admin.role.name]);
      const renamed = tag();
      await request(t.url).put('/auth/roles').set(admin.auth).send({ id: admin.role.id, name: renamed }).expect(200);
      expect((await request(t.url).get('/auth/profile').set(admin.auth).expect(200)).body.roles).toEqual([renamed]);
    });
  });

  describe('DELETE /auth/roles', () => {
    it('deletes a role without users (200 {ok: true}) with its ACLs', async () => {
      const admin = await f.loggedInUser(t, { features: MANAGER });
      const role = await f.role(admin.tenant.id, { features: ['auth.roles.list'] });
      const res = await request(t.url).delete('/auth/roles').query({ id: role.id }).set(admin.auth).expect(200);
      expect(res.body).toEqual({ ok: true });
      expect(await roleRow(role.id)).toBeUndefined();
      expect(await ds.query('SELECT 1 FROM role_acls WHERE role_id = $1', [role.id])).toEqual([]);
      const again = await request(t.url).delete('/auth/roles').query({ id: role.id }).set(admin.auth).expect(404);
      expect(again.body).toEqual({ error: 'role not found' });
    });

    it('400 while users remain assigned; memberships of deleted users do not count', async () => {
      const admin = await f.loggedInUser(t, { features: MANAGER });
      const role = await f.role(admin.tenant.id, {});
      const holder = await f.user(admin.tenant, { roleIds: [role.id] });
      const res = await request(t.url).delete('/auth/roles').query({ id: role.id }).set(admin.auth).expect(400);
      expect(res.body).toEqual({ error: 'role has assigned users' });
      expect(await roleRow(role.id)).toBeDefined();
      // Its holder is gone (soft-deleted): nothing blocks the delete any more.
      await ds.query('UPDATE users SET deleted_at = now() WHERE id = $1', [holder.id]);
      await request(t.url).delete('/auth/roles').query({ id: role.id }).set(admin.auth).expect(200);
      expect(await roleRow(role.id)).toBeUndefined();
      // The caller's own role is held by the caller.
      const own = await request(t.url).delete('/auth/roles').query({ id: admin.role.id }).set(admin.auth).expect(400);
      expect(own.body).toEqual({ error: 'role has assigned users' });
    });

    it('404 for another tenant’s role or an unknown id; 403 for global roles; 400 for a missing or invalid id', async () => {
      const admin = await f.loggedInUser(t, { features: MANAGER });
      const foreign = await f.role((await f.tenant()).id, {});
      for (const id of [foreign.id, UNKNOWN_ID]) {
        const res = await request(t.url).delete('/auth/roles').query({ id }).set(admin.auth).expect(404);
        expect(res.body).toEqual({ error: 'role not found' });
      }
      expect(await roleRow(foreign.id)).toBeDefined();
      const global = await f.role(null, {});
      await request(t.url).delete('/auth/roles').query({ id: global.id }).set(admin.auth).expect(403);
      expect(await roleRow(global.id)).toBeDefined();
      for (const query of [{}, { id: 'nope' }, { id: '' }]) {
        const res = await request(t.url).delete('/auth/roles').query(query).set(admin.auth).expect(400);
        expect(res.body).toMatchObject({ error: expect.any(String) });
      }
    });

    it('super administrators delete global roles; users of any tenant block it', async () => {
      const superAdmin = await f.loggedInUser(t, { isSuperAdmin: true });
      const global = await f.role(null, {});
      const elsewhere = await f.tenant();
      const holder = await f.user(elsewhere, { roleIds: [global.id] });
      expect((await request(t.url).delete('/auth/roles').query({ id: global.id }).set(superAdmin.auth).expect(400)).body).toEqual({
        error: 'role has assigned users',
      });
      await ds.query('DELETE FROM user_roles WHERE user_id = $1', [holder.id]);
      await request(t.url).delete('/auth/roles').query({ id: global.id }).set(superAdmin.auth).expect(200);
      expect(await roleRow(global.id)).toBeUndefined();
    });
  });
});
