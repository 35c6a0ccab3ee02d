import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;
const UNKNOWN_ID = '5b6c9a8e-1f2d-4c3b-9a7e-0d1c2b3a4f5e';

describe('notifications: list, create, status changes and isolation', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let tenant: { id: string; organizationId: string };
  let sender: Auth;
  let alice: { auth: Auth; id: string };
  let bob: { auth: Auth; id: string };
  let outsider: { auth: Auth; id: string };

  const send = (body: object, auth: Auth = sender) => request(t.url).post('/notifications').set(auth).send(body);
  const notify = async (recipientUserId: string, fields: object = {}) =>
    (await send({ type: 'test.event', severity: 'info', title: 'Hello', recipientUserId, ...fields }).expect(201)).body.id as string;
  const list = (auth: Auth, query: object = {}) => request(t.url).get('/notifications').set(auth).query(query);
  const put = (auth: Auth, id: string, op: string, body?: object) =>
    request(t.url)
      .put(`/notifications/${id}/${op}`)
      .set(auth)
      .send(body ?? {});
  const unread = async (auth: Auth) => (await request(t.url).get('/notifications/unread-count').set(auth).expect(200)).body.unreadCount;

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    tenant = await f.tenant();
    sender = (await f.loggedInUser(t, { features: ['notifications.create'] }, tenant)).auth;
    const a = await f.loggedInUser(t, { features: [] }, tenant);
    const b = await f.loggedInUser(t, { features: [] }, tenant);
    const o = await f.loggedInUser(t, { features: ['notifications.*'] });
    alice = { auth: a.auth, id: a.user.id };
    bob = { auth: b.auth, id: b.user.id };
    outsider = { auth: o.auth, id: o.user.id };
  });
  afterAll(async () => {
    await t.close();
  });

  it('documents every route in OpenAPI', async () => {
    const doc = (await request(t.url).get('/openapi.json').expect(200)).body;
    const routes: [string, string][] = [
      ['/notifications', 'get'],
      ['/notifications', 'post'],
      ['/notifications/batch', 'post'],
      ['/notifications/role', 'post'],
      ['/notifications/feature', 'post'],
      ['/notifications/mark-all-read', 'put'],
      ['/notifications/unread-count', 'get'],
      ['/notifications/settings', 'get'],
      ['/notifications/settings', 'post'],
      ['/notifications/{id}/read', 'put'],
      ['/notifications/{id}/dismiss', 'put'],
      ['/notifications/{id}/restore', 'put'],
      ['/notifications/{id}/action', 'post'],
    ];
    for (const [path, method] of routes) {
      const op = doc.paths[path]?.[method];
      expect(op).toBeDefined();
      expect(op.tags).toContain('notifications');
      expect(op.security?.length).toBeGreaterThan(0);
    }
    expect(Object.keys(doc.components.schemas.NotificationItemDto.properties)).toEqual(
      expect.arrayContaining([
        'id',
        'type',
        'title',
        'body',
        'titleKey',
        'bodyKey',
        'titleVariables',
        'bodyVariables',
        'icon',
        'severity',
        'status',
        'actions',
        'sourceModule',
        'sourceEntityType',
        'sourceEntityId',
        'linkHref',
        'createdAt',
        'readAt',
        'actionTaken',
      ]),
    );
  });

  describe('POST /notifications', () => {
    it('creates a notification for a user of the tenant: 201 {id}, listed for the recipient with every field', async () => {
      // Every field a caller may set, each with a value of its own: the listed item must give each back.
      const fields = {
        type: 'orders.assigned',
        severity: 'warning',
        title: 'Order assigned',
        body: 'Order 42 is yours',
        titleKey: 'orders.assigned.title',
        bodyKey: 'orders.assigned.body',
        titleVariables: { n: 42 },
        bodyVariables: { who: 'you' },
        icon: 'package',
        actions: [{ id: 'accept', label: 'Accept' }],
        sourceModule: 'orders',
        sourceEntityType: 'order',
        sourceEntityId: 'o-42',
        linkHref: '/backend/orders/42',
      };
      const res = await send({ ...fields, recipientUserId: alice.id }).expect(201);
      expect(Object.keys(res.body)).toEqual(['id']);
      const items = (await list(alice.auth, { ids: res.body.id }).expect(200)).body.items;
      expect(items).toEqual([
        expect.objectContaining({
          ...fields,
          id: res.body.id,
          status: 'unread',
          readAt: null,
          actionTaken: null,
          recipientUserId: alice.id,
        }),
      ]);
      expect(new Date(items[0].createdAt).toISOString()).toBe(items[0].createdAt);
      const [row] = await ds.query('SELECT tenant_id, organization_id FROM notifications WHERE id = $1', [res.body.id]);
      expect(row).toEqual({ tenant_id: tenant.id, organization_id: tenant.organizationId });
    });

    it('defaults the title to the titleKey, else the type', async () => {
      const a = await notify(alice.id, { title: undefined, titleKey: 'k.title' });
      const b = await notify(alice.id, { title: undefined });
      const items = (await list(alice.auth, { ids: `${a},${b}` }).expect(200)).body.items;
      expect(items.map((i: { id: string; title: string }) => [i.id, i.title]).sort()).toEqual(
        [
          [a, 'k.title'],
          [b, 'test.event'],
        ].sort(),
      );
    });

    it('401 without a token, 403 without notifications.create', async () => {
      await request(t.url).post('/notifications').send({ type: 'x', severity: 'info', recipientUserId: alice.id }).expect(401);
      const res = await send({ type: 'x', severity: 'info', recipientUserId: bob.id }, alice.auth).expect(403);
      expect(res.body).toEqual({ error: expect.stringContaining('notifications.create') });
    });

    it.each([
      ['type missing', { severity: 'info' }],
      ['severity missing', { type: 'x' }],
      ['unknown severity', { type: 'x', severity: 'critical' }],
      ['recipientUserId not a UUID', { type: 'x', severity: 'info', recipientUserId: 'nope' }],
      ['linkHref javascript:', { type: 'x', severity: 'info', linkHref: 'javascript:alert(1)' }],
      ['linkHref protocol-relative', { type: 'x', severity: 'info', linkHref: '//evil.example.com' }],
      ['actions not objects', { type: 'x', severity: 'info', actions: ['a'] }],
      ['action without label', { type: 'x', severity: 'info', actions: [{ id: 'a' }] }],
      ['titleVariables not an object', { type: 'x', severity: 'info', titleVariables: 'x' }],
      ['expiresAt not a date', { type: 'x', severity: 'info', expiresAt: 'tomorrow' }],
    ])('400 for an invalid payload: %s', async (_name, body) => {
      const res = await send({ recipientUserId: alice.id, ...body }).expect(400);
      expect(res.body.error).toEqual(expect.any(String));
    });

    it('400 for duplicate action ids and for an expiresAt in the past', async () => {
      const dup = await send({
        type: 'x',
        severity: 'info',
        recipientUserId: alice.id,
        actions: [
          { id: 'a', label: 'A' },
          { id: 'a', label: 'B' },
        ],
      }).expect(400);
      expect(dup.body).toEqual({ error: 'action ids must be unique' });
      const past = await send({ type: 'x', severity: 'info', recipientUserId: alice.id, expiresAt: '2000-01-01T00:00:00Z' }).expect(400);
      expect(past.body).toEqual({ error: 'expiresAt must be in the future' });
    });

    it('404 for a recipient of another tenant or unknown', async () => {
      for (const id of [outsider.id, UNKNOWN_ID]) {
        const res = await send({ type: 'x', severity: 'info', recipientUserId: id }).expect(404);
        expect(res.body).toEqual({ error: 'recipient not found' });
      }
      expect((await list(outsider.auth).expect(200)).body.total).toBe(0);
    });
  });

  describe('GET /notifications', () => {
    let user: { auth: Auth; id: string };
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      const u = await f.loggedInUser(t, { features: [] }, tenant);
      user = { auth: u.auth, id: u.user.id };
      ids.a = await notify(user.id, { type: 'alpha', severity: 'info', sourceEntityType: 'order', sourceEntityId: '1' });
      ids.b = await notify(user.id, { type: 'beta', severity: 'error', sourceEntityType: 'order', sourceEntityId: '2' });
      ids.c = await notify(user.id, { type: 'alpha', severity: 'success', sourceEntityType: 'invoice', sourceEntityId: '1' });
      ids.d = await notify(user.id, { type: 'beta', severity: 'warning' });
      await ds.query(`UPDATE notifications SET created_at = now() - interval '2 days' WHERE id = ANY($1)`, [[ids.a, ids.b]]);
      await put(user.auth, ids.d, 'dismiss').expect(200);
      await put(user.auth, ids.c, 'read').expect(200);
    });
    const listed = async (query: object) => {
      const body = (await list(user.auth, query).expect(200)).body;
      return (body.items as { id: string }[]).map((i) => Object.entries(ids).find(([, id]) => id === i.id)?.[0]);
    };

    it('newest first, paged, without dismissed ones', async () => {
      const res = await list(user.auth).expect(200);
      expect(res.body).toEqual({ items: expect.any(Array), total: 3, page: 1, pageSize: 50, totalPages: 1 });
      expect(await listed({})).toEqual(['c', expect.stringMatching(/^[ab]$/), expect.stringMatching(/^[ab]$/)]);
      const page2 = await list(user.auth, { page: 2, pageSize: 2 }).expect(200);
      expect(page2.body).toMatchObject({ total: 3, page: 2, pageSize: 2, totalPages: 2 });
      expect(page2.body.items).toHaveLength(1);
    });

    it('filters by status, type, severity, source entity, since and ids', async () => {
      expect(await listed({ status: 'dismissed' })).toEqual(['d']);
      expect(await listed({ status: 'read' })).toEqual(['c']);
      expect((await listed({ status: 'unread' })).sort()).toEqual(['a', 'b']);
      expect((await listed({ type: 'alpha' })).sort()).toEqual(['a', 'c']);
      expect(await listed({ severity: 'error' })).toEqual(['b']);
      expect((await listed({ sourceEntityType: 'order' })).sort()).toEqual(['a', 'b']);
      expect((await listed({ sourceEntityId: '1' })).sort()).toEqual(['a', 'c']);
      expect(await listed({ since: new Date(Date.now() - 24 * 3600 * 1000).toISOString() })).toEqual(['c']);
      expect((await listed({ ids: `${ids.a}, ${ids.c},${ids.d}` })).sort()).toEqual(['a', 'c']);
    });

    it('400 for more than 200 ids, a malformed id, a pageSize above 100 or an unknown status', async () => {
      const many = Array.from({ length: 201 }, () => UNKNOWN_ID).join(',');
      expect((await list(user.auth, { ids: many }).expect(400)).body).toMatchObject({ error: expect.stringContaining('at most 200') });
      await list(user.auth, { ids: Array.from({ length: 200 }, () => UNKNOWN_ID).join(',') }).expect(200);
      expect((await list(user.auth, { ids: `${ids.a},nope` }).expect(400)).body.error).toContain('UUID');
      await list(user.auth, { pageSize: 101 }).expect(400);
      await list(user.auth, { page: 0 }).expect(400);
      await list(user.auth, { status: 'archived' }).expect(400);
      await list(user.auth, { severity: 'fatal' }).expect(400);
      await list(user.auth, { since: 'yesterday' }).expect(400);
    });

    it('leaves out expired notifications, from the list and the count', async () => {
      const u = await f.loggedInUser(t, { features: [] }, tenant);
      const id = await notify(u.user.id, { expiresAt: new Date(Date.now() + 3600_000).toISOString() });
      expect(await unread(u.auth)).toBe(1);
      await ds.query(`UPDATE notifications SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
      expect(await unread(u.auth)).toBe(0);
      expect((await list(u.auth).expect(200)).body.total).toBe(0);
      await put(u.auth, id, 'read').expect(404);
    });

    it('401 without a token', async () => {
      await request(t.url).get('/notifications').expect(401);
      await request(t.url).get('/notifications/unread-count').expect(401);
    });
  });

  describe('status transitions', () => {
    it('read: unread to read with readAt; again is a no-op', async () => {
      const id = await notify(alice.id);
      const res = await put(alice.auth, id, 'read').expect(200);
      expect(res.body).toEqual({ ok: true, notification: expect.objectContaining({ id, status: 'read', readAt: expect.any(String) }) });
      const again = await put(alice.auth, id, 'read').expect(200);
      expect(again.body.notification.readAt).toBe(res.body.notification.readAt);
    });

    it('dismiss, then restore to read (default) or to unread', async () => {
      const id = await notify(alice.id);
      const dismissed = await put(alice.auth, id, 'dismiss').expect(200);
      expect(dismissed.body.notification).toMatchObject({ status: 'dismissed', dismissedAt: expect.any(String), readAt: null });
      expect((await list(alice.auth, { ids: id }).expect(200)).body.total).toBe(0);
      expect((await list(alice.auth, { ids: id, status: 'dismissed' }).expect(200)).body.total).toBe(1);

      const restored = await put(alice.auth, id, 'restore').expect(200);
      expect(restored.body.notification).toMatchObject({ status: 'read', readAt: expect.any(String), dismissedAt: null });

      await put(alice.auth, id, 'dismiss').expect(200);
      const toUnread = await put(alice.auth, id, 'restore', { status: 'unread' }).expect(200);
      expect(toUnread.body.notification).toMatchObject({ status: 'unread', readAt: null, dismissedAt: null });
    });

    it('restore: 409 when not dismissed, 400 for an unknown target status', async () => {
      const id = await notify(alice.id);
      expect((await put(alice.auth, id, 'restore').expect(409)).body).toEqual({ error: 'notification is not dismissed' });
      await put(alice.auth, id, 'dismiss').expect(200);
      await put(alice.auth, id, 'restore', { status: 'actioned' }).expect(400);
    });

    it('action: claimed once (201, then 409); unknown action 400; dismissed 409', async () => {
      const id = await notify(alice.id, {
        actions: [
          { id: 'approve', label: 'Approve' },
          { id: 'reject', label: 'Reject' },
        ],
      });
      await request(t.url)
        .post(`/notifications/${id}/action`)
        .set(alice.auth)
        .send({ actionId: 'archive' })
        .expect(400, { error: 'unknown action' });
      await request(t.url).post(`/notifications/${id}/action`).set(alice.auth).send({}).expect(400);
      const res = await request(t.url)
        .post(`/notifications/${id}/action`)
        .set(alice.auth)
        .send({ actionId: 'approve', payload: { note: 'ok' } })
        .expect(201);
      expect(res.body).toEqual({
        ok: true,
        notification: expect.objectContaining({ id, status: 'actioned', actionTaken: 'approve', readAt: expect.any(String) }),
      });
      const second = await request(t.url).post(`/notifications/${id}/action`).set(alice.auth).send({ actionId: 'reject' }).expect(409);
      expect(second.body).toEqual({ error: 'action already taken' });

      const other = await notify(alice.id, { actions: [{ id: 'approve', label: 'Approve' }] });
      await put(alice.auth, other, 'dismiss').expect(200);
      await request(t.url).post(`/notifications/${other}/action`).set(alice.auth).send({ actionId: 'approve' }).expect(409);
    });

    it('concurrent action claims: exactly one succeeds', async () => {
      const id = await notify(alice.id, { actions: [{ id: 'go', label: 'Go' }] });
      const results = await Promise.all(
        Array.from({ length: 6 }, () => request(t.url).post(`/notifications/${id}/action`).set(alice.auth).send({ actionId: 'go' })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    });

    it('a malformed id is 400, an unknown one 404', async () => {
      await put(alice.auth, 'not-a-uuid', 'read').expect(400, { error: 'invalid notification id' });
      for (const op of ['read', 'dismiss', 'restore'])
        await put(alice.auth, UNKNOWN_ID, op).expect(404, { error: 'notification not found' });
      await request(t.url).post(`/notifications/${UNKNOWN_ID}/action`).set(alice.auth).send({ actionId: 'x' }).expect(404);
    });
  });

  describe('isolation', () => {
    it('another user (same tenant or not) sees none of alice’s notifications and changes none: 404', async () => {
      const id = await notify(alice.id, { actions: [{ id: 'ok', label: 'OK' }] });
      for (const who of [bob, outsider]) {
        expect((await list(who.auth, { ids: id }).expect(200)).body.total).toBe(0);
        expect((await list(who.auth, { ids: id, status: 'unread' }).expect(200)).body.total).toBe(0);
        for (const op of ['read', 'dismiss', 'restore']) await put(who.auth, id, op).expect(404);
        await request(t.url).post(`/notifications/${id}/action`).set(who.auth).send({ actionId: 'ok' }).expect(404);
        await request(t.url).put('/notifications/mark-all-read').set(who.auth).expect(200);
      }
      const [row] = await ds.query('SELECT status, action_taken FROM notifications WHERE id = $1', [id]);
      expect(row).toEqual({ status: 'unread', action_taken: null });
    });
  });

  describe('unread-count and mark-all-read', () => {
    it('counts unread, and mark-all-read reads them all: {ok, count}', async () => {
      const u = await f.loggedInUser(t, { features: [] }, tenant);
      const other = await f.loggedInUser(t, { features: [] }, tenant);
      expect((await request(t.url).get('/notifications/unread-count').set(u.auth).expect(200)).body).toEqual({ unreadCount: 0 });
      const [a] = [await notify(u.user.id), await notify(u.user.id), await notify(u.user.id)];
      await notify(other.user.id);
      await put(u.auth, a, 'read').expect(200);
      expect(await unread(u.auth)).toBe(2);
      const res = await request(t.url).put('/notifications/mark-all-read').set(u.auth).expect(200);
      expect(res.body).toEqual({ ok: true, count: 2 });
      expect(await unread(u.auth)).toBe(0);
      expect(await unread(other.auth)).toBe(1);
      expect((await request(t.url).put('/notifications/mark-all-read').set(u.auth).expect(200)).body).toEqual({ ok: true, count: 0 });
      await request(t.url).put('/notifications/mark-all-read').expect(401);
    });
  });

  describe('groupKey', () => {
    it('deduplicates against the recipient’s notifications that are not dismissed', async () => {
      const u = await f.loggedInUser(t, { features: [] }, tenant);
      const first = await notify(u.user.id, { groupKey: 'order-7' });
      expect(await notify(u.user.id, { groupKey: 'order-7', title: 'again' })).toBe(first);
      await put(u.auth, first, 'read').expect(200);
      expect(await notify(u.user.id, { groupKey: 'order-7' })).toBe(first);
      const otherUser = await notify(bob.id, { groupKey: 'order-7' });
      expect(otherUser).not.toBe(first);

      await put(u.auth, first, 'dismiss').expect(200);
      const second = await notify(u.user.id, { groupKey: 'order-7' });
      expect(second).not.toBe(first);
      // Restoring the first would make two active notifications of one group.
      const conflict = await put(u.auth, first, 'restore').expect(409);
      expect(conflict.body).toEqual({ error: 'another notification with the same groupKey is active' });
    });

    it('an expired notification gives its groupKey up', async () => {
      const u = await f.loggedInUser(t, { features: [] }, tenant);
      const first = await notify(u.user.id, { groupKey: 'g', expiresAt: new Date(Date.now() + 3600_000).toISOString() });
      await ds.query(`UPDATE notifications SET expires_at = now() - interval '1 second' WHERE id = $1`, [first]);
      const second = await notify(u.user.id, { groupKey: 'g' });
      expect(second).not.toBe(first);
      expect(await unread(u.auth)).toBe(1);
    });

    it('concurrent creates with one groupKey write one row', async () => {
      const u = await f.loggedInUser(t, { features: [] }, tenant);
      const results = await Promise.all(
        Array.from({ length: 8 }, () => send({ type: 'x', severity: 'info', recipientUserId: u.user.id, groupKey: 'race' })),
      );
      expect(results.every((r) => r.status === 201)).toBe(true);
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
      expect(await unread(u.auth)).toBe(1);
    });
  });

  describe('POST /notifications/batch', () => {
    it('writes one notification per recipient: 201 {ok, count, ids}', async () => {
      const u1 = await f.loggedInUser(t, { features: [] }, tenant);
      const u2 = await f.loggedInUser(t, { features: [] }, tenant);
      const res = await request(t.url)
        .post('/notifications/batch')
        .set(sender)
        .send({ type: 'batch.test', severity: 'success', title: 'Batch', recipientUserIds: [u1.user.id, u2.user.id, u1.user.id] })
        .expect(201);
      expect(res.body).toEqual({ ok: true, count: 2, ids: [expect.any(String), expect.any(String)], batchId: expect.any(String) });
      expect(await unread(u1.auth)).toBe(1);
      expect(await unread(u2.auth)).toBe(1);
      const again = await request(t.url)
        .post('/notifications/batch')
        .set(sender)
        .send({ type: 'batch.test', severity: 'success', groupKey: 'b', recipientUserIds: [u1.user.id, u2.user.id] })
        .expect(201);
      expect(again.body.count).toBe(2);
      const deduped = await request(t.url)
        .post('/notifications/batch')
        .set(sender)
        .send({ type: 'batch.test', severity: 'success', groupKey: 'b', recipientUserIds: [u1.user.id, u2.user.id] })
        .expect(201);
      expect(deduped.body).toMatchObject({ ok: true, count: 0, ids: [] });
    });

    it('404 when a recipient is not a user of the tenant (nothing written); 400 for an empty or oversized list; 403 without the feature', async () => {
      const u = await f.loggedInUser(t, { features: [] }, tenant);
      const res = await request(t.url)
        .post('/notifications/batch')
        .set(sender)
        .send({ type: 'x', severity: 'info', recipientUserIds: [u.user.id, outsider.id] })
        .expect(404);
      expect(res.body).toEqual({ error: `recipients not found: ${outsider.id}` });
      expect(await unread(u.auth)).toBe(0);
      await request(t.url).post('/notifications/batch').set(sender).send({ type: 'x', severity: 'info', recipientUserIds: [] }).expect(400);
      const tooMany = Array.from({ length: 1001 }, () => u.user.id);
      await request(t.url)
        .post('/notifications/batch')
        .set(sender)
        .send({ type: 'x', severity: 'info', recipientUserIds: tooMany })
        .expect(400);
      await request(t.url)
        .post('/notifications/batch')
        .set(alice.auth)
        .send({ type: 'x', severity: 'info', recipientUserIds: [u.user.id] })
        .expect(403);
    });
  });

  describe('POST /notifications/role and /notifications/feature', () => {
    it('answer at once with {ok, count, ids: [], batchId} (the fan-out job writes the rows)', async () => {
      const role = await f.role(tenant.id, { features: ['reports.view'] });
      await f.user(tenant, { roleIds: [role.id] });
      await f.user(tenant, { roleIds: [role.id] });
      const res = await request(t.url)
        .post('/notifications/role')
        .set(sender)
        .send({ type: 'x', severity: 'info', roleId: role.id })
        .expect(201);
      expect(res.body).toEqual({ ok: true, count: 2, ids: [], batchId: expect.any(String) });
      const feat = await request(t.url)
        .post('/notifications/feature')
        .set(sender)
        .send({ type: 'x', severity: 'info', requiredFeature: 'reports.view' })
        .expect(201);
      expect(feat.body).toEqual({ ok: true, count: 2, ids: [], batchId: expect.any(String) });
    });

    it('404 for an unknown role or another tenant’s; 400 for invalid targets; 403 without the feature', async () => {
      const foreign = await f.role((await f.tenant()).id, {});
      for (const roleId of [UNKNOWN_ID, foreign.id]) {
        await request(t.url)
          .post('/notifications/role')
          .set(sender)
          .send({ type: 'x', severity: 'info', roleId })
          .expect(404, { error: 'role not found' });
      }
      await request(t.url).post('/notifications/role').set(sender).send({ type: 'x', severity: 'info', roleId: 'r' }).expect(400);
      await request(t.url).post('/notifications/role').set(sender).send({ type: 'x', severity: 'info' }).expect(400);
      await request(t.url)
        .post('/notifications/feature')
        .set(sender)
        .send({ type: 'x', severity: 'info', requiredFeature: 'has space' })
        .expect(400);
      await request(t.url).post('/notifications/feature').set(sender).send({ type: 'x', severity: 'info' }).expect(400);
      await request(t.url)
        .post('/notifications/role')
        .set(alice.auth)
        .send({ type: 'x', severity: 'info', roleId: UNKNOWN_ID })
        .expect(403);
      await request(t.url)
        .post('/notifications/feature')
        .set(alice.auth)
        .send({ type: 'x', severity: 'info', requiredFeature: 'a.b' })
        .expect(403);
    });
  });

  describe('settings', () => {
    it('GET gives the defaults; POST merges and answers 201 {ok: true, settings}', async () => {
      const manager = await f.loggedInUser(t, { features: ['notifications.manage'] });
      const defaults = await request(t.url).get('/notifications/settings').set(manager.auth).expect(200);
      expect(defaults.body).toEqual({
        settings: { strategies: { database: { enabled: true }, email: { enabled: false, from: null, subjectPrefix: '' } } },
      });
      const saved = await request(t.url)
        .post('/notifications/settings')
        .set(manager.auth)
        .send({ strategies: { email: { enabled: true, from: 'alerts@example.com', subjectPrefix: '[Acme]' } } })
        .expect(201);
      const expected = {
        strategies: { database: { enabled: true }, email: { enabled: true, from: 'alerts@example.com', subjectPrefix: '[Acme]' } },
      };
      expect(saved.body).toEqual({ ok: true, settings: expected });
      expect((await request(t.url).get('/notifications/settings').set(manager.auth).expect(200)).body).toEqual({ settings: expected });
      const partial = await request(t.url)
        .post('/notifications/settings')
        .set(manager.auth)
        .send({ strategies: { email: { enabled: false } } })
        .expect(201);
      expect(partial.body.settings.strategies.email).toEqual({ enabled: false, from: 'alerts@example.com', subjectPrefix: '[Acme]' });
      // Per tenant: another tenant still has the defaults.
      const otherManager = await f.loggedInUser(t, { features: ['notifications.manage'] });
      expect((await request(t.url).get('/notifications/settings').set(otherManager.auth).expect(200)).body).toEqual(defaults.body);
    });

    it('a save is recorded in the action log and can be undone (X-Undo-Token)', async () => {
      const manager = await f.loggedInUser(t, { features: ['notifications.manage', 'audit_logs.*'] });
      const saved = await request(t.url)
        .post('/notifications/settings')
        .set(manager.auth)
        .send({ strategies: { email: { enabled: true, subjectPrefix: '[Ops]' } } })
        .expect(201);
      const undoToken = saved.headers['x-undo-token'];
      expect(undoToken).toEqual(expect.any(String));
      const [entry] = await ds.query(
        'SELECT command_id, resource_id, changed_fields FROM action_logs WHERE tenant_id = $1 AND actor_user_id = $2',
        [manager.tenant.id, manager.user.id],
      );
      expect(entry).toEqual({ command_id: 'notifications.settings.update', resource_id: manager.tenant.id, changed_fields: ['settings'] });
      await request(t.url).post('/audit_logs/audit-logs/actions/undo').set(manager.auth).send({ undoToken }).expect(200);
      const after = await request(t.url).get('/notifications/settings').set(manager.auth).expect(200);
      expect(after.body.settings.strategies.email).toEqual({ enabled: false, from: null, subjectPrefix: '' });
    });

    it('400 for invalid settings, 403 without notifications.manage, 401 without a token', async () => {
      const manager = await f.loggedInUser(t, { features: ['notifications.manage'] });
      for (const body of [
        {},
        { strategies: 'x' },
        { strategies: { email: { enabled: 'yes' } } },
        { strategies: { email: { enabled: true, from: 'not-an-email' } } },
        { strategies: { database: {} } },
      ]) {
        const res = await request(t.url).post('/notifications/settings').set(manager.auth).send(body).expect(400);
        expect(res.body.error).toEqual(expect.any(String));
      }
      await request(t.url).get('/notifications/settings').set(sender).expect(403);
      await request(t.url).post('/notifications/settings').set(sender).send({ strategies: {} }).expect(403);
      await request(t.url).get('/notifications/settings').expect(401);
    });
  });
});
