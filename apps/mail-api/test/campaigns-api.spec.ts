import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import type { MailCampaign } from '../src/modules/campaigns/campaigns.dto.js';
import { insertContact, insertVerifiedDomain } from './support/delivery-fixtures.js';
import { bearer, createProject, expectMailError, expectValidationError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
const UUID = expect.stringMatching(/^[0-9a-f-]{36}$/);
const DOMAIN = 'news.example.com';
const UNKNOWN_ID = '0190c6a4-0000-7000-8000-000000000000';
const STATE_SUGGESTION = 'Campaign status moves: DRAFT -> SCHEDULED -> SENDING -> SENT; SCHEDULED or SENDING -> CANCELLED.';

const SPRING = {
  name: 'Spring sale',
  subject: 'Hello {{ firstName ?? friend }}',
  body: '<p>Hi {{firstName}}, <a href="https://shop.example/sale">shop</a></p>',
  from: `deals@${DOMAIN}`,
  audienceType: 'ALL',
};

/**
 * The /campaigns API without a worker: the campaign object, validation, the status machine of
 * decisions.md (400 INVALID_CAMPAIGN_STATE), the sender domain (403), project isolation and the
 * domain delete check. The send pipeline is in campaigns-pipeline.spec.ts.
 */
describe('mail /campaigns API', () => {
  let t: MailTestApp;
  let db: DataSource;
  let p: MailProjectCredentials;
  let other: MailProjectCredentials;
  let auth: Record<string, string>;
  const create = (body: object, key = auth) => request(t.url).post('/campaigns').set(key).send(body);
  const createOk = async (body: object = SPRING): Promise<MailCampaign> => {
    const res = await create(body);
    if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
    return res.body.data as MailCampaign;
  };
  const act = (id: string, action: string, body: object = {}, key = auth) =>
    request(t.url).post(`/campaigns/${id}/${action}`).set(key).send(body);

  beforeAll(async () => {
    // An SMTP URL makes the sender rule strict (the development outbox would take any sender); no worker runs.
    t = await startMailApp({ env: { MAIL_SMTP_URL: 'smtp://127.0.0.1:9' } });
    db = t.app.get(DataSource);
    p = await createProject(t, 'Campaigns');
    other = await createProject(t, 'Other');
    auth = bearer(p.secretKey);
    await insertVerifiedDomain(db, p.id, DOMAIN);
    await insertVerifiedDomain(db, other.id, DOMAIN);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('create and read', () => {
    it('POST answers 200 {success, data} with the whole campaign in DRAFT; type equals audienceType', async () => {
      const res = await create({ ...SPRING, description: 'April', fromName: 'Deals', replyTo: 'help@example.com', audienceType: 'all' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          id: UUID,
          ...SPRING,
          description: 'April',
          fromName: 'Deals',
          replyTo: 'help@example.com',
          type: 'ALL',
          audienceType: 'ALL',
          segmentId: null,
          audienceFilter: null,
          status: 'DRAFT',
          scheduledAt: null,
          sentAt: null,
          totalRecipients: 0,
          createdAt: ISO,
          updatedAt: ISO,
        },
      });
      const got = await request(t.url).get(`/campaigns/${res.body.data.id}`).set(auth).expect(200);
      expect(got.body).toEqual({ success: true, data: res.body.data });
    });

    it('422 with field details: missing fields, bad email, line breaks, malformed placeholders, unknown audience', async () => {
      expectValidationError(await create({}), [
        { field: 'name', code: 'isString' },
        { field: 'name', code: 'isLength' },
        { field: 'subject', code: 'isString' },
        { field: 'subject', code: 'isLength' },
        { field: 'body', code: 'isString' },
        { field: 'body', code: 'isByteLength' },
        { field: 'from', code: 'isEmail' },
        { field: 'from', code: 'maxLength' },
        { field: 'audienceType', code: 'isIn' },
      ]);
      expectValidationError(await create({ ...SPRING, subject: 'a\r\nBcc: x@y.z', body: '<p>{{ bad name }}</p>', replyTo: 'nope' }), [
        { field: 'subject', code: 'hasNoLineBreaks' },
        { field: 'body', code: 'invalidPlaceholder' },
        { field: 'replyTo', code: 'isEmail' },
      ]);
      expectValidationError(await create({ ...SPRING, audienceType: 'EVERYONE' }), [{ field: 'audienceType', code: 'isIn' }]);
    });

    it('SEGMENT needs a segment of the project; FILTERED a valid condition; neither field goes with another audience', async () => {
      expectValidationError(await create({ ...SPRING, audienceType: 'SEGMENT' }), [{ field: 'segmentId', code: 'isDefined' }]);
      expectValidationError(await create({ ...SPRING, audienceType: 'SEGMENT', segmentId: UNKNOWN_ID }), [
        { field: 'segmentId', code: 'segmentExists' },
      ]);
      // Another project's segment is no segment of this one.
      const foreign = await request(t.url)
        .post('/segments')
        .set(bearer(other.secretKey))
        .send({ name: 'Theirs', type: 'STATIC' })
        .expect(201);
      expectValidationError(await create({ ...SPRING, audienceType: 'SEGMENT', segmentId: foreign.body.id }), [
        { field: 'segmentId', code: 'segmentExists' },
      ]);
      expectValidationError(await create({ ...SPRING, audienceType: 'FILTERED' }), [{ field: 'audienceFilter', code: 'isDefined' }]);
      const bad = await create({
        ...SPRING,
        audienceType: 'FILTERED',
        audienceFilter: { logic: 'AND', groups: [{ filters: [{ field: 'plan', operator: 'equals', value: 'pro' }] }] },
      });
      expect(bad.status).toBe(422);
      expect(bad.body.error.errors).toEqual([
        expect.objectContaining({ field: expect.stringMatching(/^audienceFilter\.groups\[0\]\.filters\[0\]/) }),
      ]);
      expectValidationError(await create({ ...SPRING, segmentId: foreign.body.id }), [{ field: 'segmentId', code: 'isEmpty' }]);
      expectValidationError(await create({ ...SPRING, audienceFilter: { logic: 'AND', groups: [] } }), [
        { field: 'audienceFilter', code: 'isEmpty' },
      ]);
    });

    it('stores a FILTERED audience and a SEGMENT audience as given', async () => {
      const filter = { logic: 'OR', groups: [{ filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] }] };
      const filtered = await createOk({ ...SPRING, audienceType: 'FILTERED', audienceFilter: filter });
      expect(filtered).toMatchObject({ type: 'FILTERED', audienceType: 'FILTERED', audienceFilter: filter, segmentId: null });
      const segment = await request(t.url).post('/segments').set(auth).send({ name: 'VIP', type: 'STATIC' }).expect(201);
      const targeted = await createOk({ ...SPRING, audienceType: 'SEGMENT', segmentId: segment.body.id });
      expect(targeted).toMatchObject({ type: 'SEGMENT', segmentId: segment.body.id, audienceFilter: null });
    });

    it('403 DOMAIN_NOT_VERIFIED for a from address outside the verified domains, at create and update', async () => {
      expectMailError(
        await create({ ...SPRING, from: 'x@unverified.example' }),
        403,
        'DOMAIN_NOT_VERIFIED',
        'sender domain unverified.example is not verified',
      );
      const draft = await createOk();
      expectMailError(
        await request(t.url).patch(`/campaigns/${draft.id}`).set(auth).send({ from: 'x@sub.news.example.com' }),
        403,
        'DOMAIN_NOT_VERIFIED',
        'sender domain sub.news.example.com is not verified',
      );
    });

    it("another project's campaign, or a malformed id, is a 404 on every route", async () => {
      const mine = await createOk();
      const theirs = bearer(other.secretKey);
      for (const res of [
        await request(t.url).get(`/campaigns/${mine.id}`).set(theirs),
        await request(t.url).patch(`/campaigns/${mine.id}`).set(theirs).send({ name: 'x' }),
        await request(t.url).delete(`/campaigns/${mine.id}`).set(theirs),
        await act(mine.id, 'send', {}, theirs),
        await act(mine.id, 'cancel', {}, theirs),
        await act(mine.id, 'test', { email: 'a@b.example' }, theirs),
        await request(t.url).get(`/campaigns/${mine.id}/stats`).set(theirs),
        await request(t.url).get('/campaigns/not-a-uuid').set(auth),
      ]) {
        expectMailError(res, 404, 'NOT_FOUND', 'campaign not found');
      }
      expect((await request(t.url).get(`/campaigns/${mine.id}`).set(auth)).body.data.name).toBe(SPRING.name);
    });

    it('a public key is refused; no key is a 401', async () => {
      expectMailError(await request(t.url).get('/campaigns').set(bearer(p.publicKey)), 403, 'SECRET_KEY_REQUIRED', /secret key/);
      expect((await request(t.url).get('/campaigns')).status).toBe(401);
    });
  });

  describe('list', () => {
    it("newest first, keyset-paged, filtered by status, only the project's own", async () => {
      const fresh = await createProject(t, 'Listing');
      const key = bearer(fresh.secretKey);
      await insertVerifiedDomain(db, fresh.id, DOMAIN);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await create({ ...SPRING, name: `C${i}` }, key).expect(200)).body.data.id);
      await act(ids[0], 'send', { scheduledFor: new Date(Date.now() + 3_600_000).toISOString() }, key).expect(200);
      const first = await request(t.url).get('/campaigns?limit=2').set(key).expect(200);
      expect(first.body.success).toBe(true);
      expect(first.body.data).toMatchObject({ hasMore: true, total: 3 });
      expect(first.body.data.items.map((c: MailCampaign) => c.id)).toEqual([ids[2], ids[1]]);
      const second = await request(t.url).get(`/campaigns?limit=2&cursor=${first.body.data.nextCursor}`).set(key).expect(200);
      expect(second.body.data).toEqual({ items: [expect.objectContaining({ id: ids[0] })], nextCursor: null, hasMore: false, total: 3 });
      const scheduled = await request(t.url).get('/campaigns?status=SCHEDULED').set(key).expect(200);
      expect(scheduled.body.data.items.map((c: MailCampaign) => c.id)).toEqual([ids[0]]);
      expectValidationError(await request(t.url).get('/campaigns?status=DONE').set(key), [{ field: 'status', code: 'isIn' }]);
      expectValidationError(await request(t.url).get('/campaigns?limit=101').set(key), [{ field: 'limit', code: 'max' }]);
      await act(ids[0], 'cancel', {}, key).expect(200);
    });
  });

  describe('status machine', () => {
    it('DRAFT -> SCHEDULED (future scheduledFor) -> rescheduled -> CANCELLED; then every move is refused', async () => {
      const c = await createOk();
      const at = new Date(Date.now() + 3_600_000);
      const scheduled = await act(c.id, 'send', { scheduledFor: at.toISOString() }).expect(200);
      expect(scheduled.body).toEqual({
        success: true,
        data: expect.objectContaining({ status: 'SCHEDULED', scheduledAt: at.toISOString(), sentAt: null }),
      });
      const later = new Date(Date.now() + 7_200_000);
      const moved = await act(c.id, 'send', { scheduledFor: later.toISOString() }).expect(200);
      expect(moved.body.data).toMatchObject({ status: 'SCHEDULED', scheduledAt: later.toISOString() });
      // A SCHEDULED campaign may still be edited.
      await request(t.url).patch(`/campaigns/${c.id}`).set(auth).send({ subject: 'Changed' }).expect(200);
      const cancelled = await act(c.id, 'cancel').expect(200);
      expect(cancelled.body.data).toMatchObject({ status: 'CANCELLED' });
      for (const [res, action] of [
        [await act(c.id, 'send'), 'send'],
        [await act(c.id, 'cancel'), 'cancel'],
        [await request(t.url).patch(`/campaigns/${c.id}`).set(auth).send({ name: 'x' }), 'update'],
        [await request(t.url).delete(`/campaigns/${c.id}`).set(auth), 'delete'],
      ] as const) {
        expectMailError(res, 400, 'INVALID_CAMPAIGN_STATE', new RegExp(`^cannot ${action} a CANCELLED campaign`), {
          suggestion: STATE_SUGGESTION,
        });
      }
    });

    it('a DRAFT cannot be cancelled; a DRAFT is deleted with 200 {success, data: {id}}', async () => {
      const c = await createOk();
      expectMailError(
        await act(c.id, 'cancel'),
        400,
        'INVALID_CAMPAIGN_STATE',
        'cannot cancel a DRAFT campaign (only SCHEDULED or SENDING)',
        {
          suggestion: STATE_SUGGESTION,
        },
      );
      const res = await request(t.url).delete(`/campaigns/${c.id}`).set(auth).expect(200);
      expect(res.body).toEqual({ success: true, data: { id: c.id } });
      expectMailError(await request(t.url).get(`/campaigns/${c.id}`).set(auth), 404, 'NOT_FOUND', 'campaign not found');
    });

    it('send without scheduledFor, or with a past one, answers SENDING; a SENDING campaign cannot be updated, deleted or sent again', async () => {
      const now = await createOk();
      const sending = await act(now.id, 'send').expect(200);
      expect(sending.body.data).toMatchObject({ status: 'SENDING', scheduledAt: null, sentAt: ISO });
      const past = await createOk();
      expect((await act(past.id, 'send', { scheduledFor: '2020-01-01T00:00:00.000Z' }).expect(200)).body.data.status).toBe('SENDING');
      const state = { suggestion: STATE_SUGGESTION };
      expectMailError(
        await act(now.id, 'send'),
        400,
        'INVALID_CAMPAIGN_STATE',
        'cannot send a SENDING campaign (only DRAFT or SCHEDULED)',
        state,
      );
      expectMailError(
        await request(t.url).patch(`/campaigns/${now.id}`).set(auth).send({ name: 'x' }),
        400,
        'INVALID_CAMPAIGN_STATE',
        'cannot update a SENDING campaign (only DRAFT or SCHEDULED)',
        state,
      );
      expectMailError(
        await request(t.url).delete(`/campaigns/${now.id}`).set(auth),
        400,
        'INVALID_CAMPAIGN_STATE',
        /^cannot delete a SENDING/,
        state,
      );
      expect((await act(now.id, 'cancel').expect(200)).body.data.status).toBe('CANCELLED');
      await act(past.id, 'cancel').expect(200);
    });

    it('send validates scheduledFor and re-checks the sender domain', async () => {
      const c = await createOk();
      expectValidationError(await act(c.id, 'send', { scheduledFor: 'tomorrow' }), [{ field: 'scheduledFor', code: 'isIso8601' }]);
      await db.query(`UPDATE domains SET status = 'FAILED' WHERE project_id = $1`, [p.id]);
      try {
        expectMailError(await act(c.id, 'send'), 403, 'DOMAIN_NOT_VERIFIED', `sender domain ${DOMAIN} is not verified`);
        expect((await request(t.url).get(`/campaigns/${c.id}`).set(auth)).body.data.status).toBe('DRAFT');
      } finally {
        await db.query(`UPDATE domains SET status = 'VERIFIED' WHERE project_id = $1`, [p.id]);
      }
    });

    it("PATCH sets given fields, null clears optional ones, a new audienceType drops the other kind's field", async () => {
      const segment = await request(t.url).post('/segments').set(auth).send({ name: 'Patch', type: 'STATIC' }).expect(201);
      const c = await createOk({ ...SPRING, audienceType: 'SEGMENT', segmentId: segment.body.id, fromName: 'Deals' });
      const res = await request(t.url)
        .patch(`/campaigns/${c.id}`)
        .set(auth)
        .send({ name: 'Renamed', fromName: null, audienceType: 'ALL' })
        .expect(200);
      expect(res.body.data).toMatchObject({
        name: 'Renamed',
        fromName: null,
        audienceType: 'ALL',
        type: 'ALL',
        segmentId: null,
        subject: SPRING.subject,
      });
      expectValidationError(await request(t.url).patch(`/campaigns/${c.id}`).set(auth).send({ audienceType: 'FILTERED' }), [
        { field: 'audienceFilter', code: 'isDefined' },
      ]);
      expectValidationError(await request(t.url).patch(`/campaigns/${c.id}`).set(auth).send({ name: null }), [
        { field: 'name', code: 'isString' },
        { field: 'name', code: 'isLength' },
      ]);
    });

    it('a segment used by a SCHEDULED campaign cannot be deleted (409 SEGMENT_IN_USE); after cancel it can', async () => {
      const segment = await request(t.url).post('/segments').set(auth).send({ name: 'Held', type: 'STATIC' }).expect(201);
      const c = await createOk({ ...SPRING, audienceType: 'SEGMENT', segmentId: segment.body.id });
      await act(c.id, 'send', { scheduledFor: new Date(Date.now() + 3_600_000).toISOString() }).expect(200);
      expect((await request(t.url).delete(`/segments/${segment.body.id}`).set(auth)).status).toBe(409);
      await act(c.id, 'cancel').expect(200);
      expect((await request(t.url).delete(`/segments/${segment.body.id}`).set(auth)).status).toBe(204);
    });
  });

  describe('stats', () => {
    it('zero counts and rates before anything is sent', async () => {
      const c = await createOk();
      const res = await request(t.url).get(`/campaigns/${c.id}/stats`).set(auth).expect(200);
      expect(res.body).toEqual({
        success: true,
        data: {
          totalRecipients: 0,
          sentCount: 0,
          deliveredCount: 0,
          openedCount: 0,
          clickedCount: 0,
          machineOpenedCount: 0,
          machineClickedCount: 0,
          bouncedCount: 0,
          suppressedCount: 0,
          complainedCount: 0,
          openRate: 0,
          clickRate: 0,
          bounceRate: 0,
          complaintRate: 0,
        },
      });
    });
  });

  describe('DELETE /domains/{id}', () => {
    it('409 DOMAIN_IN_USE while an unfinished campaign sends from it; allowed once it is finished', async () => {
      const fresh = await createProject(t, 'Domain holder');
      const key = bearer(fresh.secretKey);
      await insertVerifiedDomain(db, fresh.id, 'held.example');
      const [{ id: domainId }] = await db.query<{ id: string }[]>(`SELECT id FROM domains WHERE project_id = $1`, [fresh.id]);
      await insertContact(db, fresh.id, 'someone@example.net');
      const c = (await create({ ...SPRING, name: 'Holder', from: 'a@held.example' }, key).expect(200)).body.data as MailCampaign;
      expectMailError(
        await request(t.url).delete(`/domains/${domainId}`).set(key),
        409,
        'DOMAIN_IN_USE',
        `domain held.example is in use by campaign "Holder" (${c.id}); change their from address first`,
      );
      await act(c.id, 'send', { scheduledFor: new Date(Date.now() + 3_600_000).toISOString() }, key).expect(200);
      expect((await request(t.url).delete(`/domains/${domainId}`).set(key)).status).toBe(409);
      await act(c.id, 'cancel', {}, key).expect(200);
      await request(t.url).delete(`/domains/${domainId}`).set(key).expect(204);
    });
  });
});
