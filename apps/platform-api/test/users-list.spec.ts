import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Tenant = { id: string; organizationId: string };
type Auth = { Authorization: string };

describe('GET /auth/users', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let tenantA: Tenant;
  let tenantB: Tenant;
  let secondOrgA: string;
  let adminA: Auth;
  let adminB: Auth;
  let superAdmin: Auth;
  let editorRole: { id: string; name: string };
  let viewerRole: { id: string; name: string };
  let alice: { id: string; email: string };
  let bob: { id: string; email: string };
  let carol: { id: string; email: string };
  let bUser: { id: string; email: string };
  let adminAUserId: string;

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    tenantA = await f.tenant('Tenant A');
    tenantB = await f.tenant('Tenant B');
    [{ id: secondOrgA }] = await ds.query(
      `INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'A second', 'a-second') RETURNING id`,
      [tenantA.id],
    );
    const a = await f.loggedInUser(t, { features: ['auth.users.list'] }, tenantA);
    adminA = a.auth;
    adminAUserId = a.user.id;
    adminB = (await f.loggedInUser(t, { features: ['auth.users.list'] }, tenantB)).auth;
    superAdmin = (await f.loggedInUser(t, { isSuperAdmin: true })).auth;
    editorRole = await f.role(tenantA.id, { features: ['x.edit'] }, { name: 'Editor' });
    viewerRole = await f.role(tenantA.id, { features: ['x.view'] }, { name: 'viewer' });
    alice = await f.user(tenantA, { email: 'alice@example.com', name: 'Alice Liddell', roleIds: [viewerRole.id, editorRole.id] });
    bob = await f.user(tenantA, { email: 'bob@example.com', name: 'Robert 100%', password: null });
    carol = await f.user(
      { id: tenantA.id, organizationId: secondOrgA },
      { email: 'carol@example.com', name: 'Carol', roleIds: [viewerRole.id] },
    );
    const deleted = await f.user(tenantA, { email: 'deleted@example.com' });
    await ds.query('UPDATE users SET deleted_at = now() WHERE id = $1', [deleted.id]);
    bUser = await f.user(tenantB, { email: 'bee@example.com', name: 'Alice of B' });
  });
  afterAll(async () => {
    await t.close();
  });

  const list = (auth: Auth, query: Record<string, string | number> = {}) => request(t.url).get('/auth/users').query(query).set(auth);

  it('401 without a token, 403 without auth.users.list', async () => {
    await request(t.url).get('/auth/users').expect(401, { error: 'unauthorized' });
    const { auth } = await f.loggedInUser(t, { features: ['auth.users.create'] });
    const res = await list(auth).expect(403);
    expect(res.body).toEqual({ error: expect.stringContaining('auth.users.list') });
  });

  it('lists the tenant’s users (not deleted ones) with roles, ordered by email, with page metadata', async () => {
    const res = await list(adminA).expect(200);
    expect(res.body).toMatchObject({ total: 4, totalPages: 1, page: 1, pageSize: 50 });
    expect(res.body.items.map((u: { email: string }) => u.email)).toEqual([
      'alice@example.com',
      'bob@example.com',
      'carol@example.com',
      expect.stringMatching(/^user-/), // the caller
    ]);
    const [created] = await ds.query('SELECT created_at FROM users WHERE id = $1', [alice.id]);
    expect(res.body.items[0]).toEqual({
      id: alice.id,
      email: 'alice@example.com',
      name: 'Alice Liddell',
      roles: [
        { id: editorRole.id, name: 'Editor' },
        { id: viewerRole.id, name: 'viewer' },
      ],
      tenantId: tenantA.id,
      organizationId: tenantA.organizationId,
      hasPassword: true,
      createdAt: new Date(created.created_at).toISOString(),
    });
    expect(res.body.items[1]).toMatchObject({ id: bob.id, roles: [], hasPassword: false });
  });

  it('pages: page and pageSize, total and totalPages, past the last page an empty page with the total', async () => {
    const second = await list(adminA, { page: 2, pageSize: 2 }).expect(200);
    expect(second.body).toMatchObject({ total: 4, totalPages: 2, page: 2, pageSize: 2 });
    expect(second.body.items.map((u: { id: string }) => u.id)).toEqual([carol.id, adminAUserId]);
    const beyond = await list(adminA, { page: 9, pageSize: 2 }).expect(200);
    expect(beyond.body).toEqual({ items: [], total: 4, totalPages: 2, page: 9, pageSize: 2 });
  });

  it('400 for pageSize above 100, page 0, or malformed ids', async () => {
    await list(adminA, { pageSize: 100 }).expect(200);
    const tooBig = await list(adminA, { pageSize: 101 }).expect(400);
    expect(tooBig.body.error).toMatch(/pageSize/);
    await list(adminA, { page: 0 }).expect(400);
    await list(adminA, { page: 'x' }).expect(400);
    await list(adminA, { id: 'nope' }).expect(400);
    await list(adminA, { roleId: 'nope' }).expect(400);
    await list(adminA, { organizationId: 'nope' }).expect(400);
    await list(adminA, { tenantId: 'nope' }).expect(400);
  });

  it('search is case-insensitive on email and name, and treats % and _ literally', async () => {
    const byEmail = await list(adminA, { search: 'ALICE@' }).expect(200);
    expect(byEmail.body.items.map((u: { id: string }) => u.id)).toEqual([alice.id]);
    const byName = await list(adminA, { search: 'liddell' }).expect(200);
    expect(byName.body.items.map((u: { id: string }) => u.id)).toEqual([alice.id]);
    const literal = await list(adminA, { search: '100%' }).expect(200);
    expect(literal.body.items.map((u: { id: string }) => u.id)).toEqual([bob.id]);
    const underscore = await list(adminA, { search: 'a_ice' }).expect(200);
    expect(underscore.body.total).toBe(0);
  });

  it('filters by id, roleId and organizationId', async () => {
    const byId = await list(adminA, { id: carol.id }).expect(200);
    expect(byId.body).toMatchObject({ total: 1, items: [{ id: carol.id }] });
    const byRole = await list(adminA, { roleId: viewerRole.id }).expect(200);
    expect(byRole.body.items.map((u: { id: string }) => u.id)).toEqual([alice.id, carol.id]);
    // The role filter still reports every role of the matched users.
    expect(byRole.body.items[0].roles).toHaveLength(2);
    const byOrg = await list(adminA, { organizationId: secondOrgA }).expect(200);
    expect(byOrg.body.items.map((u: { id: string }) => u.id)).toEqual([carol.id]);
  });

  it('tenant isolation: B’s users never appear in A’s list, not even by id, search or tenantId', async () => {
    const all = await list(adminA, { pageSize: 100 }).expect(200);
    expect(all.body.items.map((u: { id: string }) => u.id)).not.toContain(bUser.id);
    expect((await list(adminA, { id: bUser.id }).expect(200)).body).toMatchObject({ total: 0, items: [] });
    expect((await list(adminA, { search: 'bee@' }).expect(200)).body.total).toBe(0);
    const named = await list(adminA, { tenantId: tenantB.id }).expect(200);
    expect(named.body).toEqual({ items: [], total: 0, totalPages: 1, page: 1, pageSize: 50 });
    const own = await list(adminA, { tenantId: tenantA.id }).expect(200);
    expect(own.body.total).toBe(4);
    const fromB = await list(adminB).expect(200);
    expect(fromB.body.items.map((u: { email: string }) => u.email)).toContain('bee@example.com');
    expect(fromB.body.items.map((u: { id: string }) => u.id)).not.toContain(alice.id);
  });

  it('a super administrator sees every tenant, or one tenant with tenantId', async () => {
    const everyone = await list(superAdmin, { pageSize: 100 }).expect(200);
    const ids = everyone.body.items.map((u: { id: string }) => u.id);
    expect(ids).toEqual(expect.arrayContaining([alice.id, bob.id, carol.id, bUser.id]));
    const onlyA = await list(superAdmin, { tenantId: tenantA.id }).expect(200);
    expect(onlyA.body.total).toBe(4);
    expect(onlyA.body.items.every((u: { tenantId: string }) => u.tenantId === tenantA.id)).toBe(true);
  });

  it('every users endpoint is in the OpenAPI document, the consent write marked as an addition', async () => {
    const doc = (await request(t.url).get('/openapi.json').expect(200)).body;
    expect(Object.keys(doc.paths['/auth/users']).sort()).toEqual(['delete', 'get', 'post', 'put']);
    expect(doc.paths['/auth/users/resend-invite'].post.responses).toHaveProperty('429');
    expect(Object.keys(doc.paths['/auth/users/consents']).sort()).toEqual(['get', 'post']);
    expect(doc.paths['/auth/users/consents'].post.summary).toMatch(/addition/);
    expect(doc.components.schemas.UserListItemDto.required).toEqual(
      expect.arrayContaining(['id', 'email', 'name', 'roles', 'tenantId', 'organizationId', 'hasPassword', 'createdAt']),
    );
    expect(doc.components.schemas.ConsentRecordDto.properties).toHaveProperty('integrityValid');
  });

  // Last: it adds a user to tenant A, which the counts above do not expect.
  it('a caller restricted to organizations sees only their users; another organization is 403', async () => {
    const restricted = await f.loggedInUser(t, { features: ['auth.users.list'], organizations: [secondOrgA] }, tenantA);
    const res = await list(restricted.auth).expect(200);
    expect(res.body.items.map((u: { id: string }) => u.id)).toEqual([carol.id]);
    await list(restricted.auth, { organizationId: secondOrgA }).expect(200);
    const denied = await list(restricted.auth, { organizationId: tenantA.organizationId }).expect(403);
    expect(denied.body).toEqual({ error: 'organization is outside your access' });
  });
});
