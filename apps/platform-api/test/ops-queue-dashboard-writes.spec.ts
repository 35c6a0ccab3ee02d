import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { QueueService } from '@app/service-kit';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const QUEUE = 'platform-ops-writes';

/**
 * The platform's queue dashboard is read-only by default (issue #33): super administrators read it;
 * retry, promote and clean need the `queues.manage` feature granted explicitly (being a super
 * administrator is not enough) and each is an action log entry; obliterate and job data edits are
 * refused to everyone. Over HTTP against the real app, Postgres and Redis.
 */
describe('platform-api queue dashboard: read-only by default, allowlisted and audited writes', () => {
  let t: PlatformTestApp;
  let db: DataSource;
  let reader: { auth: Record<string, string> };
  let writer: { auth: Record<string, string>; user: { id: string }; tenant: { id: string } };
  let manager: { auth: Record<string, string> };
  let delayedId: string;

  beforeAll(async () => {
    t = await startPlatformApp();
    db = t.app.get(DataSource);
    const factories = Factories.of(t);
    reader = await factories.loggedInUser(t, { isSuperAdmin: true });
    writer = await factories.loggedInUser(t, { isSuperAdmin: true, features: ['queues.manage'] });
    // The feature without being a super administrator opens nothing.
    manager = await factories.loggedInUser(t, { features: ['queues.manage'] });
    const queues = t.app.get(QueueService);
    delayedId = (await queues.add(QUEUE, 'later', { keep: 'me' }, { delay: 3_600_000 })) ?? '';
  });
  afterAll(async () => {
    await t?.close();
  });

  const queue = () => t.app.get(QueueService).queue(QUEUE);
  const call = (method: 'put' | 'patch' | 'post', p: string, auth: Record<string, string>, body: object = {}) =>
    request(t.url)[method](`/admin/queues/api/queues/${QUEUE}${p}`).set(auth).send(body);

  it('gives a super administrator without queues.manage a read-only board: every write 403', async () => {
    const list = await request(t.url).get('/admin/queues/api/queues').set(reader.auth).expect(200);
    expect((list.body.queues as { name: string; readOnlyMode: boolean }[]).find((q) => q.name === QUEUE)?.readOnlyMode).toBe(true);
    for (const [method, p] of [
      ['put', `/${delayedId}/promote`],
      ['put', '/promote'],
      ['put', '/clean/completed'],
      ['put', '/retry/failed'],
      ['put', '/obliterate'],
      ['patch', `/${delayedId}/update-data`],
    ] as const) {
      const res = await call(method, p, reader.auth);
      expect({ p, status: res.status, body: res.body }).toEqual({ p, status: 403, body: { error: expect.stringMatching(/read-only/) } });
    }
    expect((await call('put', `/${delayedId}/promote`, manager.auth)).status).toBe(403);
    expect(await queue().getJobState(delayedId)).toBe('delayed');
  });

  it('never lets anyone obliterate, empty, add or edit job data, even with queues.manage (403)', async () => {
    for (const [method, p, body] of [
      ['put', '/obliterate', {}],
      ['put', '/empty', {}],
      ['post', '/add', { name: 'x', data: {} }],
      ['patch', `/${delayedId}/update-data`, { jobData: { keep: 'changed' } }],
    ] as const) {
      const res = await call(method, p, writer.auth, body);
      expect({ p, status: res.status, body: res.body }).toEqual({
        p,
        status: 403,
        body: { error: 'the queue dashboard allows only retry, promote and clean' },
      });
    }
    expect((await queue().getJob(delayedId))?.data).toEqual({ keep: 'me' });
  });

  it('lets queues.manage promote, and records the write in the action log before it runs', async () => {
    const list = await request(t.url).get('/admin/queues/api/queues').set(writer.auth).expect(200);
    expect((list.body.queues as { name: string; readOnlyMode: boolean }[]).find((q) => q.name === QUEUE)?.readOnlyMode).toBe(false);
    const res = await call('put', `/${delayedId}/promote`, writer.auth);
    expect(res.status).toBeLessThan(300);
    expect(await queue().getJobState(delayedId)).toBe('waiting');
    const rows = await db.query<Record<string, unknown>[]>(
      `SELECT tenant_id, actor_user_id, command_id, action_type, resource_kind, resource_id, parent_resource_id, source, context
         FROM action_logs WHERE source = 'queue_dashboard'`,
    );
    expect(rows).toEqual([
      {
        tenant_id: writer.tenant.id,
        actor_user_id: writer.user.id,
        command_id: 'queues.promote',
        action_type: 'edit',
        resource_kind: 'queue_job',
        resource_id: `${QUEUE}/${delayedId}`,
        parent_resource_id: QUEUE,
        source: 'queue_dashboard',
        context: { queue: QUEUE, jobId: delayedId, status: null },
      },
    ]);
  });
});
