import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Subscription } from 'rxjs';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { EventBus } from '../src/core/events/event-bus.service.js';
import type { PlatformEvent } from '../src/core/events/platform-event.js';
import { QueueService, WorkerRunner } from '@app/service-kit';
import { PendingActionsJobs } from '../src/modules/ai-assistant/actions/pending-actions.jobs.js';
import { AI_ACTIONS_QUEUE, AiActionsJob, AiActionsSchedule } from '../src/modules/ai-assistant/actions/pending-actions.queue.js';
import { WorkerModule } from '../src/worker.module.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;
const USER = ['ai_assistant.view', 'auth.roles.list', 'auth.roles.manage'];
const ACTIONS = '/ai_assistant/ai/actions';
const SERIALIZED_FIELDS = [
  'agentId',
  'attachmentIds',
  'createdAt',
  'executionResult',
  'expiresAt',
  'fieldDiff',
  'id',
  'recordVersion',
  'resolvedAt',
  'resolvedByUserId',
  'status',
  'targetEntityType',
  'targetRecordId',
  'toolName',
].sort();

/**
 * Pending actions over HTTP: the state machine of platform-api.md (cancel, confirm, expiry), creator
 * binding, the stored result of a repeated confirm, `failed`, the `ai.action.*` events and the expiry job.
 * Actions are proposed through POST /ai_assistant/tools/execute (the mutation tool `auth.rename_role`).
 */
describe('AI pending actions: GET, cancel, confirm, expiry', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let worker: INestApplicationContext;
  let subscription: Subscription;
  const events: PlatformEvent[] = [];

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    subscription = t.app
      .get(EventBus)
      .stream()
      .subscribe((e) => events.push(e));
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(t.config), { logger: false });
  });
  afterAll(async () => {
    subscription?.unsubscribe();
    await worker?.close();
    await t?.close();
  });

  /** A user of a fresh tenant who may rename roles, and a role of that tenant. */
  async function setup(features = USER) {
    const owner = await f.loggedInUser(t, { features });
    const role = await f.role(owner.tenant.id, {}, { name: `Editors ${randomUUID().slice(0, 6)}` });
    return { ...owner, target: role };
  }
  async function propose(auth: Auth, roleId: string, name = `Renamed ${randomUUID().slice(0, 6)}`) {
    const res = await request(t.url)
      .post('/ai_assistant/tools/execute')
      .set(auth)
      .send({ toolName: 'auth__rename_role', args: { roleId, name } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['ok', 'pendingActionId']);
    return { id: res.body.pendingActionId as string, name };
  }
  const roleName = async (id: string) => (await ds.query('SELECT name FROM roles WHERE id = $1', [id]))[0]?.name as string;
  const renamesOf = async (roleId: string) =>
    Number(
      (
        await ds.query(`SELECT count(*)::int AS n FROM action_logs WHERE command_id = 'auth.roles.update' AND resource_id = $1`, [roleId])
      )[0].n,
    );
  const eventsOf = (actionId: string) => events.filter((e) => e.payload.id === actionId && e.id.startsWith('ai.action.')).map((e) => e.id);
  const expire = (id: string) => ds.query(`UPDATE ai_pending_actions SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);

  it('a proposal is a pending action with the preview, and only the serialized fields', async () => {
    const { auth, target, user } = await setup();
    const { id, name } = await propose(auth, target.id);
    const res = await request(t.url).get(`${ACTIONS}/${id}`).set(auth).expect(200);
    expect(Object.keys(res.body).sort()).toEqual(SERIALIZED_FIELDS);
    expect(res.body).toMatchObject({
      id,
      agentId: 'auth.access_assistant',
      toolName: 'auth.rename_role',
      status: 'pending',
      targetEntityType: 'auth.role',
      targetRecordId: target.id,
      fieldDiff: { name: { from: target.name, to: name } },
      recordVersion: expect.any(Number),
      attachmentIds: [],
      executionResult: null,
      resolvedAt: null,
      resolvedByUserId: null,
    });
    const ttl = Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt);
    expect(ttl).toBe(900_000);
    // Stored, but never answered.
    const [row] = await ds.query('SELECT normalized_input, created_by_user_id, idempotency_key FROM ai_pending_actions WHERE id = $1', [
      id,
    ]);
    expect(row.normalized_input).toEqual({ roleId: target.id, name });
    expect(row.created_by_user_id).toBe(user.id);
    expect(JSON.stringify(res.body)).not.toContain(row.idempotency_key);
    expect(await roleName(target.id)).toBe(target.name);
    expect(eventsOf(id)).toEqual(['ai.action.created']);
  });

  it('confirm runs the tool once through the command bus; a repeated confirm answers the stored result', async () => {
    const { auth, target, user } = await setup();
    const { id, name } = await propose(auth, target.id);
    const first = await request(t.url).post(`${ACTIONS}/${id}/confirm`).set(auth).expect(200);
    expect(first.body).toMatchObject({
      ok: true,
      pendingAction: { id, status: 'confirmed', resolvedByUserId: user.id, executionResult: { ok: true, roleId: target.id, name } },
      mutationResult: { ok: true, roleId: target.id, name },
    });
    expect(first.body.pendingAction.resolvedAt).toEqual(expect.any(String));
    expect(await roleName(target.id)).toBe(name);
    expect(await renamesOf(target.id)).toBe(1);

    const again = await request(t.url).post(`${ACTIONS}/${id}/confirm`).set(auth).expect(200);
    expect(again.body).toEqual(first.body);
    expect(await renamesOf(target.id)).toBe(1);
    expect(eventsOf(id)).toEqual(['ai.action.created', 'ai.action.confirmed']);
    // Not pending any more: cancel is a conflict.
    const cancel = await request(t.url).post(`${ACTIONS}/${id}/cancel`).set(auth).send({}).expect(409);
    expect(cancel.body).toEqual({ error: expect.any(String), code: 'invalid_status' });
  });

  it('two concurrent confirms run the tool once and both answer its result', async () => {
    const { auth, target } = await setup();
    const { id, name } = await propose(auth, target.id);
    const [a, b] = await Promise.all([
      request(t.url).post(`${ACTIONS}/${id}/confirm`).set(auth),
      request(t.url).post(`${ACTIONS}/${id}/confirm`).set(auth),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.mutationResult).toEqual({ ok: true, roleId: target.id, name });
    expect(b.body).toEqual(a.body);
    expect(await renamesOf(target.id)).toBe(1);
    expect(eventsOf(id).filter((e) => e === 'ai.action.confirmed')).toHaveLength(1);
  });

  it('a confirm racing a cancel: exactly one of them wins, and the role changes only if the confirm did', async () => {
    const { auth, target } = await setup();
    const { id, name } = await propose(auth, target.id);
    const [confirm, cancel] = await Promise.all([
      request(t.url).post(`${ACTIONS}/${id}/confirm`).set(auth),
      request(t.url).post(`${ACTIONS}/${id}/cancel`).set(auth),
    ]);
    const confirmed = confirm.status === 200;
    expect([confirm.status, cancel.status].sort()).toEqual([200, 409]);
    expect((confirmed ? cancel : confirm).body.code).toBe('invalid_status');
    expect(await roleName(target.id)).toBe(confirmed ? name : target.name);
    expect(eventsOf(id)).toEqual(['ai.action.created', confirmed ? 'ai.action.confirmed' : 'ai.action.cancelled']);
  });

  it('cancel: pending -> cancelled once (one event), the tool never runs; confirm then is 409 invalid_status', async () => {
    const { auth, target } = await setup();
    const { id } = await propose(auth, target.id);
    const res = await request(t.url).post(`${ACTIONS}/${id}/cancel`).set(auth).send({ reason: 'not now' }).expect(200);
    expect(Object.keys(res.body).sort()).toEqual(SERIALIZED_FIELDS);
    expect(res.body).toMatchObject({ id, status: 'cancelled', executionResult: null, resolvedAt: expect.any(String) });
    const again = await request(t.url).post(`${ACTIONS}/${id}/cancel`).set(auth).expect(200);
    expect(again.body).toEqual(res.body);
    expect(eventsOf(id)).toEqual(['ai.action.created', 'ai.action.cancelled']);
    const confirm = await request(t.url).post(`${ACTIONS}/${id}/confirm`).set(auth).expect(409);
    expect(confirm.body).toEqual({ error: expect.any(String), code: 'invalid_status' });
    expect(await roleName(target.id)).toBe(target.name);
    expect((await ds.query('SELECT cancel_reason FROM ai_pending_actions WHERE id = $1', [id]))[0].cancel_reason).toBe('not now');
  });

  it('cancel body: unknown fields, a reason over 500 characters and non-objects are 400; nothing changes', async () => {
    const { auth, target } = await setup();
    const { id } = await propose(auth, target.id);
    for (const body of [{ reason: 'x', force: true }, { reason: 'x'.repeat(501) }, { reason: 5 }, ['reason']]) {
      const res = await request(t.url).post(`${ACTIONS}/${id}/cancel`).set(auth).send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/validation failed/);
    }
    await request(t.url)
      .post(`${ACTIONS}/${id}/cancel`)
      .set(auth)
      .send({ reason: 'x'.repeat(500) })
      .expect(200);
  });

  it('past expiresAt: GET says expired, cancel and confirm are 409 expired, the row becomes expired with one event', async () => {
    const { auth, target } = await setup();
    const first = await propose(auth, target.id);
    const second = await propose(auth, target.id, 'Another name');
    await expire(first.id);
    await expire(second.id);
    expect((await request(t.url).get(`${ACTIONS}/${first.id}`).set(auth).expect(200)).body.status).toBe('expired');
    const cancel = await request(t.url).post(`${ACTIONS}/${first.id}/cancel`).set(auth).expect(409);
    expect(cancel.body).toEqual({ error: expect.any(String), code: 'expired' });
    const confirm = await request(t.url).post(`${ACTIONS}/${second.id}/confirm`).set(auth).expect(409);
    expect(confirm.body).toEqual({ error: expect.any(String), code: 'expired' });
    const rows = await ds.query('SELECT id, status FROM ai_pending_actions WHERE id = ANY($1) ORDER BY id', [[first.id, second.id]]);
    expect(rows.map((r: { status: string }) => r.status)).toEqual(['expired', 'expired']);
    // A second attempt finds the expired row: still 409 expired, no second event.
    await request(t.url).post(`${ACTIONS}/${first.id}/confirm`).set(auth).expect(409);
    await request(t.url).post(`${ACTIONS}/${second.id}/cancel`).set(auth).expect(409);
    expect(eventsOf(first.id)).toEqual(['ai.action.created', 'ai.action.expired']);
    expect(eventsOf(second.id)).toEqual(['ai.action.created', 'ai.action.expired']);
    expect(await roleName(target.id)).toBe(target.name);
  });

  it('the expiry job marks pending actions past expiresAt expired, once, and leaves the others', async () => {
    const jobs = worker.get(PendingActionsJobs);
    await jobs.expirePending(); // whatever earlier tests left
    const { auth, target } = await setup();
    const due = await propose(auth, target.id);
    const live = await propose(auth, target.id, 'Still live');
    const cancelled = await propose(auth, target.id, 'Cancelled');
    await request(t.url).post(`${ACTIONS}/${cancelled.id}/cancel`).set(auth).expect(200);
    await expire(due.id);
    await expire(cancelled.id);
    expect(await jobs.expirePending()).toEqual({ expired: 1 });
    expect(await jobs.expirePending()).toEqual({ expired: 0 });
    const status = async (id: string) => (await ds.query('SELECT status FROM ai_pending_actions WHERE id = $1', [id]))[0].status;
    expect([await status(due.id), await status(live.id), await status(cancelled.id)]).toEqual(['expired', 'pending', 'cancelled']);
    // The worker's event reaches the API instance over Redis.
    for (let i = 0; i < 50 && !eventsOf(due.id).includes('ai.action.expired'); i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(eventsOf(due.id)).toEqual(['ai.action.created', 'ai.action.expired']);
  });

  it('the worker runs the expiry on its schedule', async () => {
    const { auth, target } = await setup();
    const due = await propose(auth, target.id);
    await expire(due.id);
    await worker.get(WorkerRunner).start({ queues: [AI_ACTIONS_QUEUE] });
    await worker.get(AiActionsSchedule).schedule({ everyMs: 200 });
    try {
      let status = 'pending';
      for (let i = 0; i < 100 && status !== 'expired'; i += 1) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await ds.query('SELECT status FROM ai_pending_actions WHERE id = $1', [due.id]))[0].status;
      }
      expect(status).toBe('expired');
    } finally {
      await worker.get(QueueService).queue(AI_ACTIONS_QUEUE).removeJobScheduler(AiActionsJob.ExpirePending);
    }
  });

  it('a tool that throws moves the action to failed with executionResult.error; a repeat answers the same', async () => {
    const { auth, target, tenant } = await setup();
    const taken = await f.role(tenant.id, {}, { name: `Taken ${randomUUID().slice(0, 6)}` });
    const { id } = await propose(auth, target.id, taken.name);
    const res = await request(t.url).post(`${ACTIONS}/${id}/confirm`).set(auth).expect(200);
    expect(res.body).toMatchObject({
      ok: false,
      pendingAction: { id, status: 'failed', executionResult: { error: { code: 'BAD_REQUEST', message: 'role name already exists' } } },
      mutationResult: { error: { code: 'BAD_REQUEST', message: 'role name already exists' } },
    });
    expect((await request(t.url).post(`${ACTIONS}/${id}/confirm`).set(auth).expect(200)).body).toEqual(res.body);
    expect(eventsOf(id)).toEqual(['ai.action.created', 'ai.action.failed']);
    expect(await roleName(target.id)).toBe(target.name);
  });

  it('creator-bound: another user of the tenant gets 404; a super administrator of the tenant may confirm', async () => {
    const { auth, target, tenant } = await setup();
    const { id, name } = await propose(auth, target.id);
    const colleague = await f.loggedInUser(t, { features: USER }, tenant);
    const stranger = await f.loggedInUser(t, { features: ['*'] });
    for (const other of [colleague.auth, stranger.auth]) {
      await request(t.url).get(`${ACTIONS}/${id}`).set(other).expect(404);
      await request(t.url).post(`${ACTIONS}/${id}/cancel`).set(other).expect(404);
      const res = await request(t.url).post(`${ACTIONS}/${id}/confirm`).set(other).expect(404);
      expect(res.body).toEqual({ error: 'pending action not found' });
    }
    // Ids that cannot exist are the same 404.
    await request(t.url).get(`${ACTIONS}/not-a-uuid`).set(auth).expect(404);
    await request(t.url).post(`${ACTIONS}/${randomUUID()}/confirm`).set(auth).expect(404);
    const admin = await f.loggedInUser(t, { isSuperAdmin: true }, tenant);
    const res = await request(t.url).post(`${ACTIONS}/${id}/confirm`).set(admin.auth).expect(200);
    expect(res.body.pendingAction).toMatchObject({ status: 'confirmed', resolvedByUserId: admin.user.id });
    expect(await roleName(target.id)).toBe(name);
  });

  it('without ai_assistant.view every action route is 403; without a token 401', async () => {
    const { auth, target, tenant } = await setup();
    const { id } = await propose(auth, target.id);
    const blind = await f.loggedInUser(t, { features: ['auth.roles.list', 'auth.roles.manage'] }, tenant);
    await request(t.url).get(`${ACTIONS}/${id}`).set(blind.auth).expect(403);
    await request(t.url).post(`${ACTIONS}/${id}/confirm`).set(blind.auth).expect(403);
    await request(t.url).post(`${ACTIONS}/${id}/cancel`).set(blind.auth).expect(403);
    await request(t.url).post(`${ACTIONS}/${id}/confirm`).expect(401);
    expect((await ds.query('SELECT status FROM ai_pending_actions WHERE id = $1', [id]))[0].status).toBe('pending');
  });
});
