import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AccessLogService } from '../src/core/audit/access-log.service.js';
import { AuthContext } from '../src/core/auth/auth-context.js';
import { createPlatformHttpApp } from '../src/http-setup.js';
import { Factories } from './support/factories.js';
import { createPlatformTestEnv, startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;
const ACCESS = '/audit_logs/audit-logs/access';
const READER = ['auth.users.list', 'auth.users.edit', 'auth.roles.list', 'auth.acl.manage', 'audit_logs.view_self'];

const authOf = (userId: string, tenantId: string, organizationId: string | null = null) =>
  new AuthContext(userId, tenantId, organizationId, randomUUID(), {
    isSuperAdmin: false,
    features: [],
    organizations: null,
    roleIds: [],
    roleNames: [],
    hasCustomAcl: false,
  });

describe('access log: reads are recorded; GET /audit_logs/audit-logs/access', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let accessLog: AccessLogService;

  const access = (auth: Auth, query: object = {}) => request(t.url).get(ACCESS).set(auth).query(query);
  const flush = () => accessLog.flush();

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    accessLog = t.app.get(AccessLogService);
  });
  afterAll(async () => {
    await t.close();
  });

  it('records one entry per read of users, roles, role and user ACLs and consents', async () => {
    const reader = await f.loggedInUser(t, { features: READER });
    const subject = await f.user(reader.tenant);
    await request(t.url).get('/auth/users').set(reader.auth).expect(200);
    await request(t.url).get('/auth/users').set(reader.auth).query({ id: subject.id }).expect(200);
    await request(t.url).get('/auth/roles').set(reader.auth).query({ search: 'role' }).expect(200);
    await request(t.url).get('/auth/roles/acl').set(reader.auth).query({ roleId: reader.role.id }).expect(200);
    await request(t.url).get('/auth/users/acl').set(reader.auth).query({ userId: subject.id }).expect(200);
    await request(t.url).get('/auth/users/consents').set(reader.auth).query({ userId: subject.id }).expect(200);
    // A refused read is not a read.
    await request(t.url).get('/auth/users/acl').set(reader.auth).query({ userId: randomUUID() }).expect(404);
    await flush();

    const res = await access(reader.auth).expect(200);
    expect(res.body).toMatchObject({ canViewTenant: false, page: 1, pageSize: 50, total: 6, totalPages: 1 });
    const seen = res.body.items.map((i: Record<string, unknown>) => [i.resourceKind, i.accessType, i.resourceId]);
    expect(seen).toEqual([
      ['auth.user_consent', 'read', subject.id],
      ['auth.user_acl', 'read', subject.id],
      ['auth.role_acl', 'read', reader.role.id],
      ['auth.role', 'read:list', null],
      ['auth.user', 'read:list', subject.id],
      ['auth.user', 'read:list', null],
    ]);
    const [, , , , byId, usersList] = res.body.items;
    expect(usersList).toMatchObject({
      actorUserId: reader.user.id,
      actorUserName: reader.user.email,
      tenantId: reader.tenant.id,
      tenantName: expect.any(String),
      organizationId: reader.tenant.organizationId,
      organizationName: expect.any(String),
      fields: expect.arrayContaining(['email', 'roles']),
    });
    expect(usersList.context.ids.sort()).toEqual([reader.user.id, subject.id].sort());
    expect(byId.context.ids).toEqual([subject.id]);
    expect(Object.keys(usersList).sort()).toEqual(
      [
        'id',
        'resourceKind',
        'resourceId',
        'accessType',
        'actorUserId',
        'actorUserName',
        'tenantId',
        'tenantName',
        'organizationId',
        'organizationName',
        'fields',
        'context',
        'createdAt',
      ].sort(),
    );
  });

  it('the read path does not wait for the write: entries appear after the batch flush', async () => {
    const reader = await f.loggedInUser(t, { features: READER });
    await request(t.url).get('/auth/roles').set(reader.auth).expect(200);
    // Without an explicit flush, the timer writes it within about 250 ms.
    const deadline = Date.now() + 10_000;
    let total = 0;
    while (Date.now() < deadline && total === 0) {
      total = (await access(reader.auth).expect(200)).body.total;
      if (!total) await new Promise((r) => setTimeout(r, 50));
    }
    expect(total).toBe(1);
  });

  it('writes a burst as multi-row batches, keeping each entry’s read time and order', async () => {
    const tenant = await f.tenant();
    const user = await f.user(tenant);
    const auth = authOf(user.id, tenant.id, tenant.organizationId);
    for (let i = 0; i < 450; i++)
      accessLog.record(auth, { resourceKind: 'test.burst', resourceId: String(i), accessType: 'read', fields: ['a'], context: { i } });
    await flush();
    const rows = await ds.query(
      `SELECT resource_id, fields, context, organization_id FROM access_logs WHERE tenant_id = $1 ORDER BY created_at, (context->>'i')::int`,
      [tenant.id],
    );
    expect(rows).toHaveLength(450);
    expect(rows[449]).toEqual({ resource_id: '449', fields: ['a'], context: { i: 449 }, organization_id: tenant.organizationId });
  });

  it('entries of a tenant deleted before the flush are skipped without losing the rest of the batch', async () => {
    const gone = await f.tenant();
    const kept = await f.tenant();
    const goneUser = await f.user(gone);
    const keptUser = await f.user(kept);
    accessLog.record(authOf(goneUser.id, gone.id), { resourceKind: 'test.gone', accessType: 'read' });
    accessLog.record(authOf(keptUser.id, kept.id), { resourceKind: 'test.kept', accessType: 'read' });
    await ds.query('DELETE FROM tenants WHERE id = $1', [gone.id]);
    await flush();
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM access_logs WHERE tenant_id = $1`, [kept.id]);
    expect(n).toBe(1);
  });

  describe('visibility, filters and paging', () => {
    let tenant: { id: string; organizationId: string };
    let o2: string;
    let anna: { auth: Auth; user: { id: string } };
    let bruno: { auth: Auth; user: { id: string } };
    let admin: { auth: Auth; user: { id: string } };
    const DAY = (d: number) => new Date(Date.UTC(2025, 0, d, 12)).toISOString();

    beforeAll(async () => {
      tenant = await f.tenant();
      [{ id: o2 }] = await ds.query(`INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'Two', $2) RETURNING id`, [
        tenant.id,
        `two-${randomUUID().slice(0, 8)}`,
      ]);
      anna = await f.loggedInUser(t, { features: ['audit_logs.view_self'] }, tenant);
      bruno = await f.loggedInUser(t, { features: ['audit_logs.view_self'] }, tenant);
      admin = await f.loggedInUser(t, { features: ['audit_logs.view_self', 'audit_logs.view_tenant'] }, tenant);
      // day, actor, kind, type, organization
      const rows: [number, string, string, string, string][] = [
        [1, anna.user.id, 'auth.user', 'read:list', tenant.organizationId],
        [2, bruno.user.id, 'auth.user_acl', 'read', tenant.organizationId],
        [3, anna.user.id, 'auth.role', 'read:list', o2],
        [4, bruno.user.id, 'audit_logs.action_log', 'export', o2],
        [5, anna.user.id, 'auth.user_consent', 'read', tenant.organizationId],
      ];
      for (const [day, actor, kind, type, org] of rows) {
        await ds.query(
          `INSERT INTO access_logs (tenant_id, organization_id, actor_user_id, resource_kind, access_type, context, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [tenant.id, org, actor, kind, type, JSON.stringify({ day }), DAY(day)],
        );
      }
      // Another tenant's read, never visible here.
      const other = await f.tenant();
      await ds.query(
        `INSERT INTO access_logs (tenant_id, resource_kind, access_type, context) VALUES ($1, 'auth.user', 'read', '{"day": 0}')`,
        [other.id],
      );
    });
    const days = (res: request.Response) => res.body.items.map((i: { context: { day: number } }) => i.context.day);

    it('tenant viewers see the tenant (canViewTenant true); others only their own reads', async () => {
      const all = await access(admin.auth).expect(200);
      expect(all.body).toMatchObject({ canViewTenant: true, total: 5 });
      expect(days(all)).toEqual([5, 4, 3, 2, 1]);
      const own = await access(anna.auth).expect(200);
      expect(own.body).toMatchObject({ canViewTenant: false, total: 3 });
      expect(days(own)).toEqual([5, 3, 1]);
    });

    it('filters: actorUserId (tenant viewers), resourceKind, accessType, organizationId, before, after', async () => {
      expect(days(await access(admin.auth, { actorUserId: bruno.user.id }).expect(200))).toEqual([4, 2]);
      expect(days(await access(admin.auth, { actorUserId: `${anna.user.id},${bruno.user.id}` }).expect(200))).toEqual([5, 4, 3, 2, 1]);
      expect(days(await access(admin.auth, { resourceKind: 'auth.role' }).expect(200))).toEqual([3]);
      expect(days(await access(admin.auth, { accessType: 'read:list' }).expect(200))).toEqual([3, 1]);
      expect(days(await access(admin.auth, { organizationId: o2 }).expect(200))).toEqual([4, 3]);
      expect(days(await access(admin.auth, { after: DAY(2), before: DAY(5) }).expect(200))).toEqual([4, 3, 2]);
      expect(days(await access(anna.auth, { accessType: 'read' }).expect(200))).toEqual([5]);
    });

    it('403 for a non-viewer naming another actor; 200 naming itself', async () => {
      const res = await access(anna.auth, { actorUserId: bruno.user.id }).expect(403);
      expect(res.body).toEqual({ error: expect.stringContaining('audit_logs.view_tenant') });
      expect(days(await access(anna.auth, { actorUserId: anna.user.id }).expect(200))).toEqual([5, 3, 1]);
    });

    it('paging: page/pageSize (default 1/50) and the legacy limit/offset', async () => {
      const res = await access(admin.auth, { page: 2, pageSize: 2 }).expect(200);
      expect(res.body).toMatchObject({ page: 2, pageSize: 2, total: 5, totalPages: 3 });
      expect(days(res)).toEqual([3, 2]);
      expect(days(await access(admin.auth, { limit: 2, offset: 3 }).expect(200))).toEqual([2, 1]);
    });

    it('400 {error} on invalid filters', async () => {
      for (const [param, query] of [
        ['actorUserId', { actorUserId: 'x' }],
        ['organizationId', { organizationId: 'x' }],
        ['before', { before: 'tomorrow' }],
        ['after', { after: '2025-01-32' }],
        ['page', { page: 0 }],
        ['pageSize', { pageSize: 201 }],
        ['limit', { limit: 1001 }],
      ] as const) {
        const res = await access(admin.auth, query).expect(400);
        expect(res.body.error).toEqual(expect.stringContaining(param));
      }
    });

    it('403 without audit_logs.view_self', async () => {
      const nobody = await f.loggedInUser(t, { features: ['audit_logs.view_tenant'] }, tenant);
      await access(nobody.auth).expect(403);
    });
  });
});

describe('access log: entries buffered at shutdown are written', () => {
  it('app.close() flushes what the read paths recorded', async () => {
    const env = await createPlatformTestEnv();
    try {
      const app = await createPlatformHttpApp(env.config);
      await app.init();
      const ds = app.get(DataSource);
      const [tenant] = await ds.query(`INSERT INTO tenants (name) VALUES ('Shutdown') RETURNING id`);
      const [user] = await ds.query(`INSERT INTO users (tenant_id, email) VALUES ($1, 'shutdown@example.com') RETURNING id`, [tenant.id]);
      const log = app.get(AccessLogService);
      for (let i = 0; i < 3; i++) log.record(authOf(user.id, tenant.id), { resourceKind: 'test.shutdown', accessType: 'read' });
      await app.close();

      const check = new DataSource({ type: 'postgres', url: env.db.url });
      await check.initialize();
      const [{ n }] = await check.query(`SELECT count(*)::int AS n FROM access_logs WHERE resource_kind = 'test.shutdown'`);
      await check.destroy();
      expect(n).toBe(3);
    } finally {
      await env.cleanup();
    }
  });
});
