import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailContact, MailProjectCredentials } from '@app/contracts';
import { bearer, createProject, expectMailError, expectValidationError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

const PRO = { logic: 'AND', groups: [{ filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] }] };

describe('mail /segments', () => {
  let t: MailTestApp;
  let a: MailProjectCredentials;
  let b: MailProjectCredentials;
  let authA: Record<string, string>;
  let authB: Record<string, string>;
  const api = (auth = authA) => ({
    post: (path: string, body: object) => request(t.url).post(path).set(auth).send(body),
    patch: (path: string, body: object) => request(t.url).patch(path).set(auth).send(body),
    get: (path: string) => request(t.url).get(path).set(auth),
    del: (path: string, body?: object) => (body ? request(t.url).delete(path).set(auth).send(body) : request(t.url).delete(path).set(auth)),
  });
  const sql = (text: string, params: unknown[] = []) => t.app.get(DataSource).query(text, params);
  const contact = async (email: string, body: object = {}, auth = authA): Promise<MailContact> =>
    (await api(auth).post('/contacts', { email, ...body })).body as MailContact;

  beforeAll(async () => {
    t = await startMailApp();
    [a, b] = await Promise.all([createProject(t, 'Segments A'), createProject(t, 'Segments B')]);
    authA = bearer(a.secretKey);
    authB = bearer(b.secretKey);
    await contact('pro1@example.com', { data: { plan: 'pro', age: 40 } });
    await contact('pro2@example.com', { data: { plan: 'pro', age: 20 }, subscribed: false });
    await contact('free@example.com', { data: { plan: 'free' } });
    // Another project's pro contact never counts for project A.
    await contact('pro-b@example.com', { data: { plan: 'pro' } }, authB);
    await api().post('/v1/track', { email: 'pro1@example.com', event: 'purchase' }).expect(200);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('create, read, update', () => {
    let dynamicId: string;

    it('POST a DYNAMIC segment (type in any case) answers 201 with the live memberCount', async () => {
      const res = await api().post('/segments', { name: '  Pro users ', type: 'dynamic', condition: PRO }).expect(201);
      dynamicId = res.body.id;
      expect(res.body).toEqual({
        id: UUID,
        name: 'Pro users',
        description: null,
        type: 'DYNAMIC',
        condition: PRO,
        memberCount: 2,
        createdAt: ISO,
        updatedAt: ISO,
      });
      expect((await api().get(`/segments/${dynamicId}`).expect(200)).body).toEqual(res.body);
    });

    it('POST a STATIC segment: no condition, memberCount 0', async () => {
      const res = await api().post('/segments', { name: 'VIP', description: 'hand-picked', type: 'Static' }).expect(201);
      expect(res.body).toMatchObject({ type: 'STATIC', condition: null, memberCount: 0, description: 'hand-picked' });
    });

    it('memberCount follows the contacts live', async () => {
      const newcomer = await contact('pro3@example.com', { data: { plan: 'pro' } });
      expect((await api().get(`/segments/${dynamicId}`).expect(200)).body.memberCount).toBe(3);
      await api().del(`/contacts/${newcomer.id}`).expect(204);
      expect((await api().get(`/segments/${dynamicId}`).expect(200)).body.memberCount).toBe(2);
    });

    it('PATCH changes name, description and condition; memberCount follows; {} changes nothing', async () => {
      const condition = {
        logic: 'OR',
        groups: [
          { filters: [{ field: 'event.purchase', operator: 'triggered' }] },
          { filters: [{ field: 'data.plan', operator: 'equals', value: 'free' }] },
        ],
      };
      const res = await api()
        .patch(`/segments/${dynamicId}`, { name: 'Buyers or free', description: 'd', condition, type: 'DYNAMIC' })
        .expect(200);
      expect(res.body).toMatchObject({ name: 'Buyers or free', description: 'd', condition, memberCount: 2, type: 'DYNAMIC' });
      const cleared = await api().patch(`/segments/${dynamicId}`, { description: null }).expect(200);
      expect(cleared.body.description).toBeNull();
      expect((await api().patch(`/segments/${dynamicId}`, {}).expect(200)).body).toEqual(cleared.body);
    });

    it('PATCH refuses a type change, a null condition on DYNAMIC, a condition on STATIC', async () => {
      expectValidationError(await api().patch(`/segments/${dynamicId}`, { type: 'static' }), [{ field: 'type', code: 'immutable' }]);
      expectValidationError(await api().patch(`/segments/${dynamicId}`, { condition: null }), [{ field: 'condition', code: 'isDefined' }]);
      const staticSegment = (await api().post('/segments', { name: 'S', type: 'STATIC' }).expect(201)).body;
      expectValidationError(await api().patch(`/segments/${staticSegment.id}`, { condition: PRO }), [
        { field: 'condition', code: 'conditionNotAllowed' },
      ]);
      expectValidationError(await api().patch(`/segments/${dynamicId}`, { name: null }), [
        { field: 'name', code: 'isString' },
        { field: 'name', code: 'isLength' },
      ]);
    });

    it('GET /segments pages newest first with total, nextCursor and memberCount per item', async () => {
      const seen: { id: string; memberCount: number }[] = [];
      let cursor: string | null = null;
      let total: number | undefined;
      do {
        const res: request.Response = await api()
          .get(`/segments?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
          .expect(200);
        expect(res.body.items.length).toBeLessThanOrEqual(2);
        seen.push(...res.body.items);
        ({ nextCursor: cursor, total } = res.body);
        expect(res.body.hasMore).toBe(cursor !== null);
      } while (cursor);
      expect(total).toBe(3);
      expect(seen).toHaveLength(3);
      const ids = seen.map((s) => s.id);
      expect([...ids].sort().reverse()).toEqual(ids);
      expect(seen.find((s) => s.id === dynamicId)?.memberCount).toBe(2);
      const dynamicOnly = await api().get('/segments?type=dynamic').expect(200);
      expect(dynamicOnly.body.items.map((s: { id: string }) => s.id)).toEqual([dynamicId]);
      expect((await api().get('/segments?search=BUYERS').expect(200)).body.total).toBe(1);
    });

    it("another project's segment is a 404 on every route; so is a non-UUID id", async () => {
      const other = api(authB);
      expectMailError(await other.get(`/segments/${dynamicId}`), 404, 'NOT_FOUND', 'segment not found');
      expectMailError(await other.patch(`/segments/${dynamicId}`, { name: 'x' }), 404, 'NOT_FOUND', 'segment not found');
      expectMailError(await other.del(`/segments/${dynamicId}`), 404, 'NOT_FOUND', 'segment not found');
      expectMailError(await other.get(`/segments/${dynamicId}/contacts`), 404, 'NOT_FOUND', 'segment not found');
      expectMailError(
        await other.post(`/segments/${dynamicId}/members`, { emails: ['x@example.com'] }),
        404,
        'NOT_FOUND',
        'segment not found',
      );
      expectMailError(
        await other.del(`/segments/${dynamicId}/members`, { emails: ['x@example.com'] }),
        404,
        'NOT_FOUND',
        'segment not found',
      );
      expect((await other.get('/segments').expect(200)).body).toEqual({ items: [], nextCursor: null, hasMore: false, total: 0 });
      expectMailError(await api().get('/segments/not-a-uuid'), 404, 'NOT_FOUND', 'segment not found');
      expect((await api().get(`/segments/${dynamicId}`).expect(200)).body.name).toBe('Buyers or free');
    });
  });

  describe('validation (422 VALIDATION_ERROR with field paths)', () => {
    it('type and name are required; type is DYNAMIC or STATIC', async () => {
      expectValidationError(await api().post('/segments', { type: 'smart', condition: PRO }), [
        { field: 'name', code: 'isString' },
        { field: 'name', code: 'isLength' },
        { field: 'type', code: 'isIn' },
      ]);
    });

    it('DYNAMIC needs a condition, STATIC refuses one', async () => {
      expectValidationError(await api().post('/segments', { name: 'x', type: 'DYNAMIC' }), [{ field: 'condition', code: 'isDefined' }]);
      expectValidationError(await api().post('/segments', { name: 'x', type: 'STATIC', condition: PRO }), [
        { field: 'condition', code: 'conditionNotAllowed' },
      ]);
    });

    it('unknown operators, fields, pairings and properties name their path', async () => {
      const res = await api().post('/segments', {
        name: 'x',
        type: 'DYNAMIC',
        condition: {
          logic: 'AND',
          groups: [
            { filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] },
            {
              filters: [
                { field: 'data.plan', operator: 'startsWith', value: 'p' },
                { field: 'phone', operator: 'equals', value: '1' },
                { field: 'event.purchase', operator: 'equals', value: 'x' },
                { field: 'createdAt', operator: 'within', value: 3 },
                { field: 'email', operator: 'equals', value: 'a@b.c', negate: true },
              ],
            },
          ],
        },
      });
      expectValidationError(res, [
        { field: 'condition.groups[1].filters[0].operator', code: 'isSegmentOperator' },
        { field: 'condition.groups[1].filters[1].field', code: 'isSegmentField' },
        { field: 'condition.groups[1].filters[2].operator', code: 'operatorNotAllowedForField' },
        { field: 'condition.groups[1].filters[3].unit', code: 'isSegmentUnit' },
        { field: 'condition.groups[1].filters[4].negate', code: 'whitelistValidation' },
      ]);
      expect(res.body.error.message).toMatch(/^validation failed: condition\.groups\[1\]\.filters\[0\]\.operator operator must be one of/);
    });

    it('a crafted huge condition is refused before any SQL is built', async () => {
      const filter = { field: 'data.k', operator: 'contains', value: 'x' };
      const groups = Array.from({ length: 21 }, () => ({ filters: Array.from({ length: 20 }, () => filter) }));
      expectValidationError(await api().post('/segments', { name: 'x', type: 'DYNAMIC', condition: { logic: 'OR', groups } }), [
        { field: 'condition.groups', code: 'arrayMaxSize' },
      ]);
      const long = { logic: 'OR', groups: [{ filters: [{ ...filter, value: 'x'.repeat(1001) }] }] };
      expectValidationError(await api().post('/segments', { name: 'x', type: 'DYNAMIC', condition: long }), [
        { field: 'condition.groups[0].filters[0].value', code: 'isSegmentValue' },
      ]);
    });

    it('hostile strings in condition keys and values are stored and counted as plain data', async () => {
      const hostile = "x'); DELETE FROM contacts; --";
      const condition = {
        logic: 'OR',
        groups: [
          { filters: [{ field: `data.${hostile}`, operator: 'equals', value: hostile }] },
          { filters: [{ field: 'email', operator: 'contains', value: "%' OR 1=1 --" }] },
          { filters: [{ field: `event.${hostile}`, operator: 'triggeredWithin', value: 1, unit: 'days' }] },
        ],
      };
      const res = await api().post('/segments', { name: 'hostile', type: 'DYNAMIC', condition }).expect(201);
      expect(res.body).toMatchObject({ condition, memberCount: 0 });
      const [{ n }] = await sql(`SELECT count(*)::int AS n FROM contacts`);
      expect(n).toBe(4);
    });
  });

  describe('static members', () => {
    let segmentId: string;
    const members = (path = '') => `/segments/${segmentId}/members${path}`;

    beforeAll(async () => {
      segmentId = (await api().post('/segments', { name: 'Static list', type: 'STATIC' }).expect(201)).body.id;
    });

    it('POST members adds existing contacts unchanged and creates missing ones unsubscribed', async () => {
      const res = await api()
        .post(members(), { emails: ['PRO1@example.com', 'new1@example.com', ' new2@example.com ', 'NEW1@example.com'] })
        .expect(200);
      expect(res.body).toEqual({ added: 3 });
      const list = (await api().get('/contacts?limit=100').expect(200)).body.contacts as MailContact[];
      const byEmail = new Map(list.map((c) => [c.email.toLowerCase(), c]));
      expect(byEmail.get('pro1@example.com')).toMatchObject({ subscribed: true, data: { plan: 'pro', age: 40 } });
      expect(byEmail.get('new1@example.com')).toMatchObject({ subscribed: false, data: {} });
      expect(byEmail.get('new2@example.com')).toMatchObject({ email: 'new2@example.com', subscribed: false });
      expect((await api().get(`/segments/${segmentId}`).expect(200)).body.memberCount).toBe(3);
    });

    it('adding members again counts only the new ones', async () => {
      expect(
        (
          await api()
            .post(members(), { emails: ['new1@example.com', 'pro2@example.com'] })
            .expect(200)
        ).body,
      ).toEqual({ added: 1 });
      expect(
        (
          await api()
            .post(members(), { emails: ['new1@example.com'] })
            .expect(200)
        ).body,
      ).toEqual({ added: 0 });
    });

    it('GET /segments/{id}/contacts pages the members as contact objects, newest first', async () => {
      const items: MailContact[] = [];
      let cursor: string | null = null;
      do {
        const res: request.Response = await api()
          .get(`/segments/${segmentId}/contacts?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
          .expect(200);
        expect(res.body.total).toBe(4);
        items.push(...res.body.items);
        cursor = res.body.nextCursor;
        expect(res.body.hasMore).toBe(cursor !== null);
      } while (cursor);
      expect(items.map((c) => c.email.toLowerCase()).sort()).toEqual([
        'new1@example.com',
        'new2@example.com',
        'pro1@example.com',
        'pro2@example.com',
      ]);
      for (const item of items) expect((await api().get(`/contacts/${item.id}`).expect(200)).body).toEqual(item);
      const ids = items.map((c) => c.id);
      expect([...ids].sort().reverse()).toEqual(ids);
      expectValidationError(await api().get(`/segments/${segmentId}/contacts?limit=101`), [{ field: 'limit', code: 'max' }]);
    });

    it('DELETE members removes by email (any case), keeps the contacts, answers {removed}', async () => {
      expect(
        (
          await api()
            .del(members(), { emails: ['NEW2@example.com', 'free@example.com', 'nobody@example.com'] })
            .expect(200)
        ).body,
      ).toEqual({
        removed: 1,
      });
      expect((await api().get(`/segments/${segmentId}`).expect(200)).body.memberCount).toBe(3);
      const list = (await api().get('/contacts?search=new2').expect(200)).body;
      expect(list.total).toBe(1);
    });

    it("a deleted contact leaves the segment; another project's contacts are never added", async () => {
      const list = (await api().get('/contacts?search=new1').expect(200)).body.contacts as MailContact[];
      await api().del(`/contacts/${list[0].id}`).expect(204);
      expect((await api().get(`/segments/${segmentId}`).expect(200)).body.memberCount).toBe(2);
      expect(
        (
          await api()
            .post(members(), { emails: ['pro-b@example.com'] })
            .expect(200)
        ).body,
      ).toEqual({ added: 1 });
      const [{ n }] = await sql(`SELECT count(*)::int AS n FROM contacts WHERE lower(email) = 'pro-b@example.com'`);
      expect(n).toBe(2);
      const bContacts = (await api(authB).get('/contacts').expect(200)).body.contacts as MailContact[];
      expect(bContacts.map((c) => c.email)).toEqual(['pro-b@example.com']);
    });

    it('at most 1000 emails, each an email; at least one', async () => {
      const emails = Array.from({ length: 1001 }, (_, i) => `bulk${i}@example.com`);
      expectValidationError(await api().post(members(), { emails }), [{ field: 'emails', code: 'arrayMaxSize' }]);
      expectValidationError(await api().del(members(), { emails }), [{ field: 'emails', code: 'arrayMaxSize' }]);
      expectValidationError(await api().post(members(), { emails: [] }), [{ field: 'emails', code: 'arrayMinSize' }]);
      expectValidationError(await api().post(members(), { emails: ['not-an-email'] }), [{ field: 'emails', code: 'isEmail' }]);
      const [{ n }] = await sql(`SELECT count(*)::int AS n FROM contacts WHERE email LIKE 'bulk%'`);
      expect(n).toBe(0);
    });

    it('1000 emails are added in one request', async () => {
      const emails = Array.from({ length: 1000 }, (_, i) => `bulk${i}@example.com`);
      expect((await api().post(members(), { emails }).expect(200)).body).toEqual({ added: 1000 });
      expect((await api().get(`/segments/${segmentId}`).expect(200)).body.memberCount).toBe(1003);
      expect((await api().del(members(), { emails }).expect(200)).body).toEqual({ removed: 1000 });
    });

    it('a DYNAMIC segment refuses member changes (400) and lists the contacts matching its condition', async () => {
      const dynamic = (await api().post('/segments', { name: 'Pro', type: 'DYNAMIC', condition: PRO }).expect(201)).body;
      const refusal = /^members can only be added to or removed from STATIC segments$/;
      expectMailError(
        await api().post(`/segments/${dynamic.id}/members`, { emails: ['a@example.com'] }),
        400,
        'SEGMENT_NOT_STATIC',
        refusal,
        {
          suggestion: /condition/,
        },
      );
      expectMailError(
        await api().del(`/segments/${dynamic.id}/members`, { emails: ['a@example.com'] }),
        400,
        'SEGMENT_NOT_STATIC',
        refusal,
        {
          suggestion: /condition/,
        },
      );
      const res = await api().get(`/segments/${dynamic.id}/contacts`).expect(200);
      expect(res.body.items.map((c: MailContact) => c.email).sort()).toEqual(['pro1@example.com', 'pro2@example.com']);
      expect(res.body).toMatchObject({ total: 2, hasMore: false, nextCursor: null });
    });
  });

  describe('DELETE', () => {
    const insertCampaign = async (segmentId: string, status: string) => {
      const [row] = await sql(
        `INSERT INTO campaigns (project_id, name, subject, body, from_email, audience_type, segment_id, status)
         VALUES ($1, 'c', 's', 'b', 'news@example.com', 'SEGMENT', $2, $3) RETURNING id`,
        [a.id, segmentId, status],
      );
      return row.id as string;
    };

    it('answers 204 and the segment is gone; its contacts stay', async () => {
      const segment = (await api().post('/segments', { name: 'tmp', type: 'STATIC' }).expect(201)).body;
      await api()
        .post(`/segments/${segment.id}/members`, { emails: ['pro1@example.com'] })
        .expect(200);
      await api().del(`/segments/${segment.id}`).expect(204);
      expectMailError(await api().get(`/segments/${segment.id}`), 404, 'NOT_FOUND', 'segment not found');
      expect((await api().get('/contacts?search=pro1').expect(200)).body.total).toBe(1);
      const [{ n }] = await sql(`SELECT count(*)::int AS n FROM segment_members WHERE segment_id = $1`, [segment.id]);
      expect(n).toBe(0);
    });

    it('409 SEGMENT_IN_USE while a SCHEDULED or SENDING campaign targets it; deletable once the campaign is done', async () => {
      const segment = (await api().post('/segments', { name: 'in use', type: 'DYNAMIC', condition: PRO }).expect(201)).body;
      const campaignId = await insertCampaign(segment.id, 'SCHEDULED');
      await insertCampaign(segment.id, 'DRAFT');
      const inUse = /^segment is used by a SCHEDULED or SENDING campaign$/;
      expectMailError(await api().del(`/segments/${segment.id}`), 409, 'SEGMENT_IN_USE', inUse, { suggestion: /Cancel the campaign/ });
      await sql(`UPDATE campaigns SET status = 'SENDING' WHERE id = $1`, [campaignId]);
      expectMailError(await api().del(`/segments/${segment.id}`), 409, 'SEGMENT_IN_USE', inUse, { suggestion: /Cancel the campaign/ });
      await sql(`UPDATE campaigns SET status = 'SENT' WHERE id = $1`, [campaignId]);
      await api().del(`/segments/${segment.id}`).expect(204);
    });

    it("another project's active campaign on the same id does not block (and cannot see) the segment", async () => {
      const segment = (await api().post('/segments', { name: 'mine', type: 'STATIC' }).expect(201)).body;
      await sql(
        `INSERT INTO campaigns (project_id, name, subject, body, from_email, audience_type, segment_id, status)
         VALUES ($1, 'c', 's', 'b', 'news@example.com', 'SEGMENT', $2, 'SCHEDULED')`,
        [b.id, segment.id],
      );
      await api().del(`/segments/${segment.id}`).expect(204);
    });
  });
});
