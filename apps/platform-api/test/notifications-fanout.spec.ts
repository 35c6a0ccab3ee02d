import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { QueueService } from '@app/service-kit';
import { startInProcessWorker } from '@app/service-kit/testing';
import { AclResolverService } from '../src/core/auth/acl-resolver.service.js';
import { grants, hasFeature } from '../src/core/auth/feature-match.js';
import { AccountEmailQueue } from '../src/modules/account-email/account-email.queue.js';
import { FAN_OUT_PARALLEL_CHUNKS, NotificationDispatchService } from '../src/modules/notifications/notification-dispatch.service.js';
import { patternsGranting } from '../src/modules/notifications/notification-recipients.repository.js';
import { NotificationJob, NotificationsQueue } from '../src/modules/notifications/notifications.queue.js';
import { WorkerModule } from '../src/worker.module.js';
import { Factories } from './support/factories.js';
import { startMailApiStub, waitFor } from './support/mail-api-stub.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;
const MAIL_KEY = `sk_${'cd'.repeat(24)}`;

describe('notifications: role and feature fan-out through the worker, and the email strategy', () => {
  let stub: Awaited<ReturnType<typeof startMailApiStub>>;
  let t: PlatformTestApp;
  let worker: INestApplicationContext;
  let f: Factories;
  let ds: DataSource;

  beforeAll(async () => {
    stub = await startMailApiStub();
    t = await startPlatformApp({ env: { PLATFORM_MAIL_API_URL: stub.url, PLATFORM_MAIL_API_KEY: MAIL_KEY } });
    worker = await startInProcessWorker(WorkerModule.forRoot(t.config));
    f = Factories.of(t);
    ds = t.app.get(DataSource);
  });
  afterAll(async () => {
    await worker.close();
    await t.close();
    await stub.close();
  });

  const queue = () => t.app.get(QueueService).queue(NotificationsQueue);
  const completed = (jobId: string) =>
    waitFor(async () => {
      const job = await queue().getJob(jobId);
      if (!job || (await job.getState()) !== 'completed') return null;
      // Read again once completed: the copy read before may predate its return value.
      return queue().getJob(jobId);
    }, 20_000);
  const rowsOfBatch = async (batchId: string): Promise<string[]> =>
    (await ds.query('SELECT recipient_user_id FROM notifications WHERE batch_id = $1 ORDER BY recipient_user_id', [batchId])).map(
      (r: { recipient_user_id: string }) => r.recipient_user_id,
    );

  it('the SQL feature patterns match the feature matcher', () => {
    const required = ['a', 'a.b', 'a.b.c', 'a.*', 'sales.orders.approve', 'x_y.z'];
    const granted = [
      '*',
      'a',
      'a.*',
      'a.b',
      'a.b.*',
      'a.b.c',
      'a.b.c.*',
      'a.*.*',
      'b.*',
      'a.bc',
      'a.b.c.d',
      'sales.*',
      'sales.orders.*',
      'x_y.*',
      'x.*',
    ];
    for (const r of required) for (const g of granted) expect([g, r, patternsGranting(r).includes(g)]).toEqual([g, r, grants(g, r)]);
  });

  it('a role fan-out reaches exactly the role’s members, once each, even when the job fails halfway and is retried', async () => {
    const tenant = await f.tenant();
    const sender = await f.loggedInUser(t, { features: ['notifications.create'] }, tenant);
    const role = await f.role(tenant.id, { features: [] });
    const members = await Promise.all(Array.from({ length: 25 }, () => f.user(tenant, { roleIds: [role.id], password: null })));
    const deleted = await f.user(tenant, { roleIds: [role.id], password: null });
    await ds.query('UPDATE users SET deleted_at = now() WHERE id = $1', [deleted.id]);
    await f.user(tenant, { password: null }); // not a member
    worker.get(NotificationDispatchService).chunkSize = 10;
    // One chunk at a time, so "the second chunk" is well defined (parallel chunks: the next test).
    worker.get(NotificationDispatchService).parallelChunks = 1;
    // The second chunk's first row fails once: the first chunk is committed, the job fails and is retried.
    await ds.query(`CREATE SEQUENCE fanout_fail_seq`);
    await ds.query(`
      CREATE FUNCTION fail_fanout_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.type = 'retry.test' THEN
          IF (SELECT count(*) FROM notifications WHERE batch_id = NEW.batch_id) >= 10 THEN
            IF nextval('fanout_fail_seq') = 1 THEN RAISE EXCEPTION 'injected failure'; END IF;
          END IF;
        END IF;
        RETURN NEW;
      END $$`);
    await ds.query(`CREATE TRIGGER fail_fanout_once BEFORE INSERT ON notifications FOR EACH ROW EXECUTE FUNCTION fail_fanout_once()`);
    try {
      const res = await request(t.url)
        .post('/notifications/role')
        .set(sender.auth)
        .send({ type: 'retry.test', severity: 'info', title: 'To the role', roleId: role.id })
        .expect(201);
      expect(res.body).toEqual({ ok: true, count: 25, ids: [], batchId: expect.any(String) });
      const job = await completed(`fanout-${res.body.batchId}`);
      const [seq] = await ds.query('SELECT last_value, is_called FROM fanout_fail_seq');
      // The injected failure happened once, after the first chunk was committed, and the attempt
      // that completed wrote only the rows that were missing.
      expect(seq.is_called).toBe(true);
      expect(job.returnvalue).toEqual({ recipients: 25, written: 15 });
      expect(await rowsOfBatch(res.body.batchId)).toEqual(members.map((m) => m.id).sort());

      // A duplicate delivery of the same job (another id, same batch) writes nothing.
      const duplicateId = await t.app
        .get(QueueService)
        .add(NotificationsQueue, NotificationJob.FanOut, job.data, { jobId: `dup-${res.body.batchId}` });
      const duplicate = await completed(duplicateId as string);
      expect(duplicate.returnvalue).toEqual({ recipients: 25, written: 0 });
      expect(await rowsOfBatch(res.body.batchId)).toHaveLength(25);
    } finally {
      await ds.query('DROP TRIGGER fail_fanout_once ON notifications');
      await ds.query('DROP FUNCTION fail_fanout_once(); DROP SEQUENCE fanout_fail_seq');
      worker.get(NotificationDispatchService).chunkSize = 1000;
      worker.get(NotificationDispatchService).parallelChunks = FAN_OUT_PARALLEL_CHUNKS;
    }
  });

  it('a fan-out writes several chunks at once; a chunk that fails stops the job, and its retry writes each missing member once', async () => {
    const tenant = await f.tenant();
    const sender = await f.loggedInUser(t, { features: ['notifications.create'] }, tenant);
    const role = await f.role(tenant.id, { features: [] });
    const members = await Promise.all(Array.from({ length: 23 }, () => f.user(tenant, { roleIds: [role.id], password: null })));
    const ids = members.map((m) => m.id).sort();
    const dispatch = worker.get(NotificationDispatchService);
    dispatch.chunkSize = 4; // 6 chunks, 3 at a time
    // The first attempt fails on one member of the fourth chunk, once.
    await ds.query(`CREATE SEQUENCE fanout_parallel_fail_seq`);
    await ds.query(`
      CREATE FUNCTION fail_parallel_fanout_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.type = 'parallel.test' AND NEW.recipient_user_id = '${ids[13]}' THEN
          IF nextval('fanout_parallel_fail_seq') = 1 THEN RAISE EXCEPTION 'injected failure'; END IF;
        END IF;
        RETURN NEW;
      END $$`);
    await ds.query(
      `CREATE TRIGGER fail_parallel_fanout_once BEFORE INSERT ON notifications FOR EACH ROW EXECUTE FUNCTION fail_parallel_fanout_once()`,
    );
    try {
      const res = await request(t.url)
        .post('/notifications/role')
        .set(sender.auth)
        .send({ type: 'parallel.test', severity: 'info', title: 'To the role', roleId: role.id })
        .expect(201);
      const job = await completed(`fanout-${res.body.batchId}`);
      expect(job.attemptsMade).toBe(2);
      expect((job.stacktrace ?? []).join('\n')).toContain('injected failure');
      expect(job.returnvalue.recipients).toBe(23);
      // The retry wrote exactly what the failed attempt had not committed: the failed chunk (4 rows)
      // and any not started after it. The first three chunks were in flight before it and committed.
      const committedBefore = 23 - job.returnvalue.written;
      expect(job.returnvalue.written).toBeGreaterThanOrEqual(4);
      expect(committedBefore).toBeGreaterThanOrEqual(12);
      expect(await rowsOfBatch(res.body.batchId)).toEqual(ids);
    } finally {
      await ds.query('DROP TRIGGER fail_parallel_fanout_once ON notifications');
      await ds.query('DROP FUNCTION fail_parallel_fanout_once(); DROP SEQUENCE fanout_parallel_fail_seq');
      dispatch.chunkSize = 1000;
    }
  });

  it('a role fan-out with a groupKey skips members who already have an active notification of the group', async () => {
    const tenant = await f.tenant();
    const sender = await f.loggedInUser(t, { features: ['notifications.create'] }, tenant);
    const role = await f.role(tenant.id, { features: [] });
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => f.user(tenant, { roleIds: [role.id], password: null })));
    await request(t.url)
      .post('/notifications')
      .set(sender.auth)
      .send({ type: 'g', severity: 'info', groupKey: 'weekly', recipientUserId: a.id })
      .expect(201);
    const res = await request(t.url)
      .post('/notifications/role')
      .set(sender.auth)
      .send({ type: 'g', severity: 'info', groupKey: 'weekly', roleId: role.id })
      .expect(201);
    const job = await completed(`fanout-${res.body.batchId}`);
    expect(job.returnvalue).toEqual({ recipients: 3, written: 2 });
    expect(await rowsOfBatch(res.body.batchId)).toEqual([b.id, c.id].sort());
  });

  it('a feature fan-out reaches the users whose resolved ACL grants the feature (wildcards, user ACLs, super administrators)', async () => {
    const tenant = await f.tenant();
    const sender = await f.loggedInUser(t, { features: ['notifications.create'] }, tenant);
    const userWith = async (
      roleAcl: { features?: string[]; isSuperAdmin?: boolean } | null,
      userAcl?: { features: string[]; isSuperAdmin?: boolean },
    ) => {
      const roleIds = roleAcl ? [(await f.role(tenant.id, roleAcl)).id] : [];
      const user = await f.user(tenant, { roleIds, password: null });
      if (userAcl) {
        await ds.query('INSERT INTO user_acls (tenant_id, user_id, is_super_admin, features) VALUES ($1, $2, $3, $4)', [
          tenant.id,
          user.id,
          userAcl.isSuperAdmin ?? false,
          userAcl.features,
        ]);
      }
      return user.id;
    };
    const expected = [
      await userWith({ features: ['sales.orders.approve'] }),
      await userWith({ features: ['sales.*'] }),
      await userWith({ features: ['*'] }),
      await userWith({ isSuperAdmin: true }),
      await userWith(null, { features: ['sales.orders.*'] }),
      await userWith({ features: [] }, { features: [], isSuperAdmin: true }),
      await userWith({ features: ['reports.view'] }, { features: ['sales.orders.approve'] }),
    ];
    const excluded = [
      await userWith({ features: ['sales'] }),
      await userWith({ features: ['sales.orders.approve.extra', 'sales.order.*'] }),
      await userWith({ features: ['sales.orders.approve'] }, { features: ['reports.view'] }), // the user ACL replaces the role's
      await userWith(null),
    ];
    const deleted = await userWith({ features: ['sales.orders.approve'] });
    await ds.query('UPDATE users SET deleted_at = now() WHERE id = $1', [deleted]);
    const elsewhere = await f.tenant();
    await f.user(elsewhere, { roleIds: [(await f.role(elsewhere.id, { features: ['sales.*'] })).id], password: null });

    const res = await request(t.url)
      .post('/notifications/feature')
      .set(sender.auth)
      .send({ type: 'approval.needed', severity: 'warning', requiredFeature: 'sales.orders.approve' })
      .expect(201);
    expect(res.body.count).toBe(expected.length);
    await completed(`fanout-${res.body.batchId}`);
    expect(await rowsOfBatch(res.body.batchId)).toEqual([...expected].sort());

    // The same answer as resolving each user's ACL one by one.
    const resolver = t.app.get(AclResolverService);
    for (const id of [...expected, ...excluded]) {
      const acl = await resolver.resolve(id, tenant.id);
      expect([id, acl.isSuperAdmin || hasFeature(acl.features, 'sales.orders.approve')]).toEqual([id, expected.includes(id)]);
    }
  });

  describe('email strategy', () => {
    let tenant: { id: string; organizationId: string };
    let sender: Auth;
    let manager: Auth;
    beforeAll(async () => {
      tenant = await f.tenant();
      sender = (await f.loggedInUser(t, { features: ['notifications.create'] }, tenant)).auth;
      manager = (await f.loggedInUser(t, { features: ['notifications.manage'] }, tenant)).auth;
    });

    it('off (the default): no email', async () => {
      const user = await f.user(tenant, { password: null });
      const res = await request(t.url)
        .post('/notifications/batch')
        .set(sender)
        .send({ type: 'x', severity: 'info', title: 'Quiet', recipientUserIds: [user.id] })
        .expect(201);
      expect(res.body.count).toBe(1);
      expect(await queue().getJob(`email-${res.body.batchId}`)).toBeUndefined();
      expect(stub.sends.filter((s) => s.body.to === user.email)).toEqual([]);
    });

    it('on: each new notification is sent through the mail-api /v1/send, once', async () => {
      await request(t.url)
        .post('/notifications/settings')
        .set(manager)
        .send({ strategies: { email: { enabled: true, from: 'alerts@acme.example', subjectPrefix: '[Acme]' } } })
        .expect(201);
      const user = await f.user(tenant, { password: null });
      const created = await request(t.url)
        .post('/notifications')
        .set(sender)
        .send({
          type: 'x',
          severity: 'info',
          title: 'Invoice <7> paid',
          body: 'Thanks & bye',
          linkHref: '/backend/invoices/7',
          recipientUserId: user.id,
        })
        .expect(201);
      const sent = await waitFor(() => stub.sends.find((s) => s.body.to === user.email));
      expect(sent.headers.authorization).toBe(`Bearer ${MAIL_KEY}`);
      expect(sent.headers['idempotency-key']).toBe(`platform-notification-${created.body.id}`);
      expect(sent.body.subject).toBe('[Acme] Invoice <7> paid');
      expect(sent.body.from).toBe('alerts@acme.example');
      expect(sent.body.body).toContain('Invoice &lt;7&gt; paid');
      expect(sent.body.body).toContain('Thanks &amp; bye');
      expect(sent.body.body).toContain('http://localhost:3000/backend/invoices/7');

      const role = await f.role(tenant.id, { features: [] });
      const members = await Promise.all([1, 2, 3].map(() => f.user(tenant, { roleIds: [role.id], password: null })));
      const fan = await request(t.url)
        .post('/notifications/role')
        .set(sender)
        .send({ type: 'x', severity: 'info', title: 'All hands', roleId: role.id })
        .expect(201);
      await completed(`fanout-${fan.body.batchId}`);
      const emails = members.map((m) => m.email);
      await waitFor(() => (emails.every((e) => stub.sends.some((s) => s.body.to === e)) ? true : null));
      // Run the batch's email job again: every message is deduplicated by notification id.
      const again = await t.app
        .get(QueueService)
        .add(
          NotificationsQueue,
          NotificationJob.Email,
          { tenantId: tenant.id, batchId: fan.body.batchId },
          { jobId: `again-${fan.body.batchId}` },
        );
      expect((await completed(again as string)).returnvalue).toEqual({ queued: 3 });
      const ids: string[] = (await ds.query('SELECT id FROM notifications WHERE batch_id = $1', [fan.body.batchId])).map(
        (r: { id: string }) => r.id,
      );
      const accountEmails = t.app.get(QueueService).queue(AccountEmailQueue);
      await waitFor(async () => {
        const states = await Promise.all(ids.map(async (id) => (await accountEmails.getJob(`notification-${id}`))?.getState()));
        return states.every((s) => s === 'completed') ? true : null;
      });
      for (const e of emails) expect(stub.sends.filter((s) => s.body.to === e)).toHaveLength(1);
    });
  });
});
