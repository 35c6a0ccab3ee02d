import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories, login } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;
const ACTIONS = '/audit_logs/audit-logs/actions';

interface Seed {
  id: string;
  actor: 'anna' | 'bruno' | 'carla';
  org: 'o1' | 'o2' | null;
  label: string | null;
  type: 'create' | 'edit' | 'delete' | 'assign';
  kind: string;
  resource: string;
  parentKind?: string;
  parent?: string;
  state: 'done' | 'undone' | 'redone';
  token: boolean;
  changes: Record<string, { from: unknown; to: unknown }>;
  source: 'api' | 'undo' | 'redo';
  day: number;
}

const R1 = randomUUID();
const R2 = randomUUID();
const U1 = randomUUID();

/** The tenant's action log, oldest first (day = day of January 2025). */
function seedModel(): Seed[] {
  const e = (s: Omit<Seed, 'id'>): Seed => ({ id: randomUUID(), ...s });
  return [
    e({
      actor: 'anna',
      org: 'o1',
      label: 'Create role',
      type: 'create',
      kind: 'auth.role',
      resource: R1,
      state: 'done',
      token: true,
      changes: { name: { from: null, to: 'r1' } },
      source: 'api',
      day: 1,
    }),
    e({
      actor: 'bruno',
      org: 'o1',
      label: 'Edit role',
      type: 'edit',
      kind: 'auth.role',
      resource: R1,
      state: 'done',
      token: true,
      changes: { acls: { from: [], to: [{ features: ['x'] }] }, name: { from: 'r1', to: 'r1b' } },
      source: 'api',
      day: 2,
    }),
    e({
      actor: 'anna',
      org: 'o1',
      label: 'Delete user',
      type: 'delete',
      kind: 'auth.user',
      resource: U1,
      state: 'done',
      token: false,
      changes: { email: { from: 'u1@example.com', to: null } },
      source: 'undo',
      day: 3,
    }),
    e({
      actor: 'bruno',
      org: 'o2',
      label: 'Assign role',
      type: 'assign',
      kind: 'auth.user_role',
      resource: randomUUID(),
      parentKind: 'auth.role',
      parent: R1,
      state: 'done',
      token: false,
      changes: { members: { from: 0, to: 1 } },
      source: 'api',
      day: 4,
    }),
    e({
      actor: 'anna',
      org: 'o2',
      label: null,
      type: 'edit',
      kind: 'auth.role',
      resource: R2,
      state: 'redone',
      token: true,
      changes: {},
      source: 'redo',
      day: 5,
    }),
    e({
      actor: 'carla',
      org: 'o1',
      label: 'Edit role',
      type: 'edit',
      kind: 'auth.role',
      resource: R2,
      state: 'undone',
      token: false,
      changes: { name: { from: 'a', to: 'b' } },
      source: 'api',
      day: 6,
    }),
    e({
      actor: 'anna',
      org: null,
      label: 'Create role',
      type: 'create',
      kind: 'auth.role',
      resource: R2,
      state: 'done',
      token: true,
      changes: { name: { from: null, to: 'r2' } },
      source: 'api',
      day: 7,
    }),
  ];
}

const at = (day: number) => new Date(Date.UTC(2025, 0, day, 12)).toISOString();

describe('GET /audit_logs/audit-logs/actions', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let model: Seed[];
  let tenant: { id: string; organizationId: string; name: string };
  let o2: string;
  const people = {} as Record<Seed['actor'], { id: string; auth: Auth; display: string }>;
  /** audit_logs.view_tenant holder, not an actor of the seed. */
  let admin: Auth;
  let foreignEntry: string;

  const list = (auth: Auth, query: object = {}) => request(t.url).get(ACTIONS).set(auth).query(query);
  const ids = (res: request.Response) => res.body.items.map((i: { id: string }) => i.id);
  const newestFirst = (a: Seed, b: Seed) => b.day - a.day;
  const expected = (pick: (s: Seed) => boolean, order: (a: Seed, b: Seed) => number = newestFirst) =>
    model
      .filter(pick)
      .sort(order)
      .map((s) => s.id);

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    const name = `Audit ${randomUUID().slice(0, 6)}`;
    tenant = { ...(await f.tenant(name)), name };
    [{ id: o2 }] = await ds.query(`INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, 'Second', $2) RETURNING id`, [
      tenant.id,
      `o2-${randomUUID().slice(0, 8)}`,
    ]);
    const role = await f.role(tenant.id, { features: ['audit_logs.view_self', 'audit_logs.undo_self'] });
    const make = async (key: Seed['actor'], display: string, named: boolean) => {
      const email = `${key}-${randomUUID().slice(0, 6)}@example.com`;
      const user = await f.user(tenant, { email, name: named ? display : undefined, roleIds: [role.id] });
      people[key] = {
        id: user.id,
        auth: { Authorization: `Bearer ${await login(t, user.email, user.password)}` },
        display: named ? display : email,
      };
    };
    await make('anna', 'Anna', true);
    await make('bruno', '', false);
    await make('carla', 'Carla', true);
    admin = (await f.loggedInUser(t, { features: ['audit_logs.view_self', 'audit_logs.view_tenant'] }, tenant)).auth;

    model = seedModel();
    for (const s of model) {
      await ds.query(
        `INSERT INTO action_logs (id, tenant_id, organization_id, actor_user_id, command_id, action_label, action_type, resource_kind,
           resource_id, parent_resource_kind, parent_resource_id, execution_state, undo_token, snapshot_before, snapshot_after,
           changes, changed_fields, context, source, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $20)`,
        [
          s.id,
          tenant.id,
          s.org === 'o1' ? tenant.organizationId : s.org === 'o2' ? o2 : null,
          people[s.actor].id,
          `${s.kind}.${s.type}`,
          s.label,
          s.type,
          s.kind,
          s.resource,
          s.parentKind ?? null,
          s.parent ?? null,
          s.state,
          s.token ? `tok-${s.id}` : null,
          JSON.stringify({ before: true }),
          JSON.stringify({ after: true }),
          JSON.stringify(s.changes),
          Object.keys(s.changes),
          s.source === 'api' ? null : JSON.stringify({ of: 'x' }),
          s.source,
          at(s.day),
        ],
      );
    }
    // Another tenant's entry, also acted on R1: never visible here.
    const other = await f.tenant();
    const stranger = await f.user(other);
    [{ id: foreignEntry }] = await ds.query(
      `INSERT INTO action_logs (tenant_id, actor_user_id, command_id, action_type, resource_kind, resource_id, changes, changed_fields, created_at)
       VALUES ($1, $2, 'auth.roles.update', 'edit', 'auth.role', $3, '{"name": {"from": 1, "to": 2}}', '{name}', $4) RETURNING id`,
      [other.id, stranger.id, R1, at(3)],
    );
  });
  afterAll(async () => {
    await t.close();
  });

  describe('entries and visibility', () => {
    it('a tenant viewer sees every entry of its tenant, newest first, in the Action log entry shape', async () => {
      const res = await list(admin).expect(200);
      expect(res.body).toEqual({ items: expect.any(Array), canViewTenant: true, page: 1, pageSize: 50, total: 7, totalPages: 1 });
      expect(ids(res)).toEqual(expected(() => true));
      expect(ids(res)).not.toContain(foreignEntry);
      const bruno = res.body.items.find((i: { actorUserId: string }) => i.actorUserId === people.bruno.id);
      expect(Object.keys(bruno).sort()).toEqual(
        [
          'id',
          'commandId',
          'actionLabel',
          'actionType',
          'executionState',
          'source',
          'actorUserId',
          'actorUserName',
          'tenantId',
          'tenantName',
          'organizationId',
          'organizationName',
          'resourceKind',
          'resourceId',
          'parentResourceKind',
          'parentResourceId',
          'undoToken',
          'createdAt',
          'updatedAt',
          'snapshotBefore',
          'snapshotAfter',
          'changes',
          'context',
        ].sort(),
      );
      const first = res.body.items.at(-1);
      const seed = model[0];
      expect(first).toEqual({
        id: seed.id,
        commandId: 'auth.role.create',
        actionLabel: 'Create role',
        actionType: 'create',
        executionState: 'done',
        source: 'api',
        actorUserId: people.anna.id,
        actorUserName: 'Anna',
        tenantId: tenant.id,
        tenantName: tenant.name,
        organizationId: tenant.organizationId,
        organizationName: `${tenant.name} Org`,
        resourceKind: 'auth.role',
        resourceId: R1,
        parentResourceKind: null,
        parentResourceId: null,
        undoToken: null, // anna's token is not handed to the admin
        createdAt: at(1),
        updatedAt: at(1),
        snapshotBefore: { before: true },
        snapshotAfter: { after: true },
        changes: { name: { from: null, to: 'r1' } },
        context: null,
      });
      expect(bruno.actorUserName).toBe(people.bruno.display); // no name: the email
    });

    it('anyone else sees only its own entries (canViewTenant false), with its own undo tokens', async () => {
      const res = await list(people.anna.auth).expect(200);
      expect(res.body.canViewTenant).toBe(false);
      expect(res.body.total).toBe(4);
      expect(ids(res)).toEqual(expected((s) => s.actor === 'anna'));
      const own = res.body.items.find((i: { id: string }) => i.id === model[0].id);
      expect(own.undoToken).toBe(`tok-${model[0].id}`);
      expect(ids(await list(people.bruno.auth).expect(200))).toEqual(expected((s) => s.actor === 'bruno'));
    });

    it('actorUserId: tenant viewers filter by one actor or a comma list; others get 403 naming another actor, 200 naming themselves', async () => {
      expect(ids(await list(admin, { actorUserId: people.bruno.id }).expect(200))).toEqual(expected((s) => s.actor === 'bruno'));
      expect(ids(await list(admin, { actorUserId: `${people.bruno.id},${people.carla.id}` }).expect(200))).toEqual(
        expected((s) => s.actor !== 'anna'),
      );
      const denied = await list(people.anna.auth, { actorUserId: people.bruno.id }).expect(403);
      expect(denied.body).toEqual({ error: expect.stringContaining('audit_logs.view_tenant') });
      await list(people.anna.auth, { actorUserId: `${people.anna.id},${people.bruno.id}` }).expect(403);
      expect(ids(await list(people.anna.auth, { actorUserId: people.anna.id }).expect(200))).toEqual(expected((s) => s.actor === 'anna'));
    });

    it('403 without audit_logs.view_self; 401 without a token', async () => {
      const nobody = await f.loggedInUser(t, { features: ['audit_logs.view_tenant'] }, tenant);
      expect((await list(nobody.auth).expect(403)).body).toEqual({ error: expect.stringContaining('audit_logs.view_self') });
      await request(t.url).get(ACTIONS).expect(401);
    });

    it('a tenant viewer restricted to organizations sees the entries of those organizations; naming another organization is 403', async () => {
      const restricted = await f.loggedInUser(
        t,
        { features: ['audit_logs.view_self', 'audit_logs.view_tenant'], organizations: [o2] },
        tenant,
      );
      expect(ids(await list(restricted.auth).expect(200))).toEqual(expected((s) => s.org === 'o2'));
      await list(restricted.auth, { organizationId: tenant.organizationId }).expect(403);
      expect(ids(await list(restricted.auth, { organizationId: o2 }).expect(200))).toEqual(expected((s) => s.org === 'o2'));
    });
  });

  describe('filters', () => {
    const cases: [string, Record<string, string>, (s: Seed) => boolean][] = [
      ['organizationId', {}, () => true], // filled in below with the tenant's first organization
      ['resourceKind', { resourceKind: 'auth.user' }, (s) => s.kind === 'auth.user'],
      ['resourceId', { resourceId: R1 }, (s) => s.resource === R1],
      ['resourceKind + resourceId', { resourceKind: 'auth.role', resourceId: R2 }, (s) => s.kind === 'auth.role' && s.resource === R2],
      ['includeRelated', { resourceId: R1, includeRelated: 'true' }, (s) => s.resource === R1 || s.parent === R1],
      [
        'includeRelated with resourceKind',
        { resourceKind: 'auth.role', resourceId: R1, includeRelated: 'true' },
        (s) => (s.kind === 'auth.role' && s.resource === R1) || (s.parentKind === 'auth.role' && s.parent === R1),
      ],
      ['includeRelated=false', { resourceId: R1, includeRelated: 'false' }, (s) => s.resource === R1],
      ['actionType', { actionType: 'edit' }, (s) => s.type === 'edit'],
      ['actionType list', { actionType: 'create,delete' }, (s) => s.type === 'create' || s.type === 'delete'],
      ['fieldName', { fieldName: 'name' }, (s) => 'name' in s.changes],
      ['fieldName list', { fieldName: 'email, members' }, (s) => 'email' in s.changes || 'members' in s.changes],
      // Only what the caller itself can undo: the viewer made none of these entries (see hardening-audit-list-export.spec.ts).
      ['undoableOnly', { undoableOnly: 'true' }, () => false],
      ['undoableOnly=0', { undoableOnly: '0' }, () => true],
      ['after (inclusive)', { after: at(5) }, (s) => s.day >= 5],
      ['before (exclusive)', { before: at(3) }, (s) => s.day < 3],
      ['after + before, dates only', { after: '2025-01-02', before: '2025-01-05' }, (s) => s.day >= 2 && s.day < 5],
      [
        'combined',
        { actionType: 'edit,create', fieldName: 'name', resourceKind: 'auth.role' },
        (s) => ['edit', 'create'].includes(s.type) && 'name' in s.changes && s.kind === 'auth.role',
      ],
    ];
    it.each(cases)('%s', async (name, query, pick) => {
      if (name === 'organizationId') {
        expect(ids(await list(admin, { organizationId: tenant.organizationId }).expect(200))).toEqual(expected((s) => s.org === 'o1'));
        return;
      }
      const res = await list(admin, query).expect(200);
      expect(ids(res)).toEqual(expected(pick));
      expect(res.body.total).toBe(expected(pick).length);
    });

    it('filters apply within the caller’s own entries for non-viewers', async () => {
      expect(ids(await list(people.anna.auth, { actionType: 'create' }).expect(200))).toEqual(
        expected((s) => s.actor === 'anna' && s.type === 'create'),
      );
      // undoableOnly: its own entries with a live token, made in its organization context (o1), as an undo requires.
      expect(ids(await list(people.anna.auth, { undoableOnly: 'true' }).expect(200))).toEqual(
        expected((s) => s.actor === 'anna' && s.org === 'o1' && s.token && (s.state === 'done' || s.state === 'redone')),
      );
    });
  });

  describe('sorting', () => {
    const display = (s: Seed) => people[s.actor].display.toLowerCase();
    const nullsLast = (a: string | null, b: string | null, dir: number) =>
      a === b ? 0 : a === null ? 1 : b === null ? -1 : (a < b ? -1 : 1) * dir;
    const tie = (a: Seed, b: Seed) => b.day - a.day;
    const sorts: [string, string, (a: Seed, b: Seed) => number][] = [
      ['createdAt', 'asc', (a, b) => a.day - b.day],
      ['createdAt', 'desc', (a, b) => b.day - a.day],
      ['user', 'asc', (a, b) => nullsLast(display(a), display(b), 1) || tie(a, b)],
      ['user', 'desc', (a, b) => nullsLast(display(a), display(b), -1) || tie(a, b)],
      ['action', 'asc', (a, b) => nullsLast(a.label?.toLowerCase() ?? null, b.label?.toLowerCase() ?? null, 1) || tie(a, b)],
      ['action', 'desc', (a, b) => nullsLast(a.label?.toLowerCase() ?? null, b.label?.toLowerCase() ?? null, -1) || tie(a, b)],
      ['field', 'asc', (a, b) => nullsLast(Object.keys(a.changes)[0] ?? null, Object.keys(b.changes)[0] ?? null, 1) || tie(a, b)],
      ['field', 'desc', (a, b) => nullsLast(Object.keys(a.changes)[0] ?? null, Object.keys(b.changes)[0] ?? null, -1) || tie(a, b)],
      ['source', 'asc', (a, b) => nullsLast(a.source, b.source, 1) || tie(a, b)],
      ['source', 'desc', (a, b) => nullsLast(a.source, b.source, -1) || tie(a, b)],
    ];
    it.each(sorts)('sortField=%s sortDir=%s', async (sortField, sortDir, order) => {
      expect(ids(await list(admin, { sortField, sortDir }).expect(200))).toEqual(expected(() => true, order));
    });

    it('sortDir defaults to desc', async () => {
      expect(ids(await list(admin, { sortField: 'source' }).expect(200))).toEqual(
        expected(
          () => true,
          (a, b) => nullsLast(a.source, b.source, -1) || tie(a, b),
        ),
      );
    });
  });

  describe('paging', () => {
    const all = () => expected(() => true);

    it('page and pageSize', async () => {
      const res = await list(admin, { page: 2, pageSize: 3 }).expect(200);
      expect(res.body).toMatchObject({ page: 2, pageSize: 3, total: 7, totalPages: 3 });
      expect(ids(res)).toEqual(all().slice(3, 6));
      expect(ids(await list(admin, { page: 3, pageSize: 3 }).expect(200))).toEqual(all().slice(6));
      const past = await list(admin, { page: 9, pageSize: 3 }).expect(200);
      expect(past.body).toMatchObject({ items: [], total: 7, totalPages: 3 });
    });

    it('legacy limit and offset', async () => {
      const res = await list(admin, { limit: 2, offset: 4 }).expect(200);
      expect(ids(res)).toEqual(all().slice(4, 6));
      expect(res.body).toMatchObject({ page: 3, pageSize: 2, total: 7, totalPages: 4 });
      expect(ids(await list(admin, { limit: 3 }).expect(200))).toEqual(all().slice(0, 3));
      expect(ids(await list(admin, { offset: 5 }).expect(200))).toEqual(all().slice(5));
    });

    it('page/pageSize win over limit/offset', async () => {
      expect(ids(await list(admin, { limit: 1, offset: 1, pageSize: 2 }).expect(200))).toEqual(all().slice(0, 2));
    });

    it('includeTotal=false skips the count: total and totalPages null, hasMore says whether a next page exists', async () => {
      const first = await list(admin, { includeTotal: 'false', pageSize: 5 }).expect(200);
      expect(first.body).toMatchObject({ total: null, totalPages: null, hasMore: true, page: 1, pageSize: 5 });
      expect(ids(first)).toEqual(all().slice(0, 5));
      const last = await list(admin, { includeTotal: 'false', pageSize: 5, page: 2 }).expect(200);
      expect(last.body).toMatchObject({ total: null, hasMore: false });
      expect(ids(last)).toEqual(all().slice(5));
      expect((await list(admin, { includeTotal: 'true' }).expect(200)).body.total).toBe(7);
    });

    it('maxima: limit 1000 and pageSize 200 are accepted, one more is 400', async () => {
      await list(admin, { limit: 1000 }).expect(200);
      await list(admin, { pageSize: 200 }).expect(200);
      expect((await list(admin, { limit: 1001 }).expect(400)).body.error).toContain('limit');
      expect((await list(admin, { pageSize: 201 }).expect(400)).body.error).toContain('pageSize');
    });
  });

  describe('deep pages (read from the nearer end) return exactly the rows of a forward read', () => {
    let big: { id: string; organizationId: string };
    let viewer: Auth;
    let actors: string[];

    beforeAll(async () => {
      big = await f.tenant();
      const v = await f.loggedInUser(t, { features: ['audit_logs.view_self', 'audit_logs.view_tenant'] }, big);
      viewer = v.auth;
      const named = await f.user(big, { name: 'Zoe' });
      actors = [v.user.id, named.id];
      // 2,600 entries; every third shares its timestamp with the previous one (ties broken by id),
      // labels and fields with nulls, so every sort's tie-breaks and NULLS placement are exercised.
      await ds.query(
        `INSERT INTO action_logs (tenant_id, actor_user_id, command_id, action_label, action_type, changes, changed_fields, source, created_at)
         SELECT $1, CASE WHEN g % 2 = 0 THEN $2::uuid ELSE $3::uuid END, 'bulk.edit',
                CASE WHEN g % 7 = 0 THEN NULL ELSE 'Label ' || (g % 13) END, 'edit', '{}',
                CASE WHEN g % 5 = 0 THEN '{}'::text[] ELSE ARRAY['f' || (g % 11)] END,
                (ARRAY['api', 'undo', 'redo'])[1 + g % 3],
                timestamptz '2025-01-01' + make_interval(secs => g - (CASE WHEN g % 3 = 0 THEN 1 ELSE 0 END))
           FROM generate_series(1, 2600) AS g`,
        [big.id, actors[0], actors[1]],
      );
    });

    /** Every id in the requested order, read forward in pages of 200 with includeTotal=false (never reversed). */
    async function forwardIds(query: object): Promise<string[]> {
      const out: string[] = [];
      for (let page = 1; ; page++) {
        const res = await list(viewer, { ...query, page, pageSize: 200, includeTotal: 'false' }).expect(200);
        out.push(...ids(res));
        if (!res.body.hasMore) return out;
      }
    }

    const sorts = [
      {},
      { sortDir: 'asc' },
      { sortField: 'user' },
      { sortField: 'action', sortDir: 'asc' },
      { sortField: 'field' },
      { sortField: 'source', sortDir: 'asc' },
      { actorUserId: '' },
    ];
    it.each(sorts)('%j', async (sort) => {
      const query = 'actorUserId' in sort ? { actorUserId: actors[1] } : sort;
      const all = await forwardIds(query);
      expect(new Set(all).size).toBe(all.length);
      expect(all).toHaveLength('actorUserId' in sort ? 1300 : 2600);
      const pages = Math.ceil(all.length / 200);
      for (const page of [pages, pages - 1, 11, Math.ceil(pages / 2) + 1]) {
        const res = await list(viewer, { ...query, page, pageSize: 200 }).expect(200);
        expect(res.body.total).toBe(all.length);
        expect(ids(res)).toEqual(all.slice((page - 1) * 200, page * 200));
      }
      // Legacy offsets that do not fall on page boundaries, and past the end.
      const res = await list(viewer, { ...query, limit: 150, offset: all.length - 170 }).expect(200);
      expect(ids(res)).toEqual(all.slice(all.length - 170, all.length - 20));
      expect(ids(await list(viewer, { ...query, limit: 50, offset: all.length + 5 }).expect(200))).toEqual([]);
    });
  });

  describe('400 on invalid filter values', () => {
    const invalid: [string, Record<string, string>][] = [
      ['actorUserId', { actorUserId: 'not-a-uuid' }],
      ['actorUserId', { actorUserId: `${randomUUID()},nope` }],
      ['organizationId', { organizationId: '123' }],
      ['resourceId', { resourceId: 'r1' }],
      ['actionType', { actionType: 'rename' }],
      ['actionType', { actionType: 'edit,bogus' }],
      ['includeRelated', { includeRelated: 'maybe' }],
      ['includeTotal', { includeTotal: 'yes' }],
      ['undoableOnly', { undoableOnly: '2' }],
      ['sortField', { sortField: 'email' }],
      ['sortDir', { sortDir: 'up' }],
      ['before', { before: 'yesterday' }],
      ['after', { after: '2025-13-45' }],
      ['after', { after: '2025-02-30T00:00:00Z' }],
      ['page', { page: '0' }],
      ['pageSize', { pageSize: 'ten' }],
      ['offset', { offset: '-1' }],
      ['limit', { limit: '0' }],
    ];
    it.each(invalid)('%s %j', async (param, query) => {
      const res = await list(admin, query).expect(400);
      expect(res.body.error).toEqual(expect.stringContaining(param));
    });
  });

  it('is documented in OpenAPI with every query parameter', async () => {
    const doc = (await request(t.url).get('/openapi.json').expect(200)).body;
    const op = doc.paths[ACTIONS].get;
    expect(op.tags).toContain('audit_logs');
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining([
        'organizationId',
        'actorUserId',
        'resourceKind',
        'resourceId',
        'actionType',
        'fieldName',
        'includeRelated',
        'includeTotal',
        'undoableOnly',
        'limit',
        'offset',
        'page',
        'pageSize',
        'sortField',
        'sortDir',
        'before',
        'after',
      ]),
    );
    for (const path of [`${ACTIONS}/export`, '/audit_logs/audit-logs/access'])
      expect(doc.paths[path].get.description).toEqual(expect.any(String));
    for (const path of [`${ACTIONS}/undo`, `${ACTIONS}/redo`]) expect(doc.paths[path].post.description).toEqual(expect.any(String));
  });
});
