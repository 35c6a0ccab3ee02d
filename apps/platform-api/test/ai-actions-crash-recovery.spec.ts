import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { DataSource, type QueryRunner } from 'typeorm';
import { QueueService, WorkerRunner } from '@app/service-kit';
import { waitFor } from '@app/service-kit/testing';
import { PendingActionsJobs } from '../src/modules/ai-assistant/actions/pending-actions.jobs.js';
import { AI_ACTIONS_QUEUE, AiActionsJob, AiActionsSchedule } from '../src/modules/ai-assistant/actions/pending-actions.queue.js';
import { WorkerModule } from '../src/worker.module.js';
import { processEnv, startApiProcess, type ApiProcess } from './support/app-process.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const USER = ['ai_assistant.view', 'auth.roles.list', 'auth.roles.manage'];
const ACTIONS = '/ai_assistant/ai/actions';
/** Short, so a lapsed claim is recovered within the test's patience (the default is 20 s). */
const LEASE_SECONDS = '2';

interface ActionState {
  status: string;
  started: boolean;
  leaseUntil: Date | null;
  executionResult: { error?: { code: string; message: string } } | null;
}

/**
 * decisions.md "Crash safety": a pending action left `executing` by a crashed process returns to a
 * confirmable state (or `failed` with `executionResult.error.code = "interrupted"` when the tool may
 * have run) within 60 s; a confirm never answers 409 forever. The worker's recovery runs on its
 * schedule here (every 300 ms, lease 2 s).
 */
describe('AI pending actions: a confirm interrupted by a crash', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let worker: INestApplicationContext;

  beforeAll(async () => {
    t = await startPlatformApp({ env: { AI_PENDING_ACTION_LEASE_SECONDS: LEASE_SECONDS } });
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(t.config), { logger: false });
    await worker.get(WorkerRunner).start({ queues: [AI_ACTIONS_QUEUE] });
    await worker.get(AiActionsSchedule).schedule({ everyMs: 60_000, recoverEveryMs: 300 });
  });

  afterAll(async () => {
    const queue = worker?.get(QueueService).queue(AI_ACTIONS_QUEUE);
    await queue?.removeJobScheduler(AiActionsJob.ExpirePending);
    await queue?.removeJobScheduler(AiActionsJob.RecoverInterrupted);
    await worker?.close();
    await t?.close();
  });

  async function setup() {
    const owner = await f.loggedInUser(t, { features: USER });
    const role = await f.role(owner.tenant.id, {}, { name: `Editors ${randomUUID().slice(0, 6)}` });
    const name = `Renamed ${randomUUID().slice(0, 6)}`;
    const res = await request(t.url)
      .post('/ai_assistant/tools/execute')
      .set(owner.auth)
      .send({ toolName: 'auth__rename_role', args: { roleId: role.id, name } });
    expect(res.status).toBe(201);
    return { ...owner, role, name, actionId: res.body.pendingActionId as string };
  }

  const state = async (id: string): Promise<ActionState> => {
    const [row] = await ds.query(
      `SELECT status, execution_started_at IS NOT NULL AS started, execution_lease_until AS "leaseUntil", execution_result AS "executionResult"
         FROM ai_pending_actions WHERE id = $1`,
      [id],
    );
    return row as ActionState;
  };
  const roleName = async (id: string) => (await ds.query('SELECT name FROM roles WHERE id = $1', [id]))[0].name as string;

  /** Holds the role's row lock, so a rename's transaction waits inside the tool until `release`. */
  async function lockRole(roleId: string): Promise<{ release(): Promise<void> }> {
    const holder: QueryRunner = ds.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query('SELECT 1 FROM roles WHERE id = $1 FOR UPDATE', [roleId]);
    return {
      release: async () => {
        await holder.rollbackTransaction();
        await holder.release();
      },
    };
  }

  /** The confirm is inside the tool: the start is committed and a backend waits for the role's lock. */
  const toolIsRunning = (id: string) =>
    waitFor(
      async () => {
        const [{ waiting }] = await ds.query(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        const s = await state(id);
        return s.status === 'executing' && s.started && waiting > 0 ? s : null;
      },
      15_000,
      'the confirm to be inside the tool',
    );

  it('an API process killed while the tool runs: the action becomes failed (interrupted); a confirm answers that, never 409', async () => {
    const { auth, role, actionId } = await setup();
    const api: ApiProcess = await startApiProcess('crashing-api', processEnv(t.config, { AI_PENDING_ACTION_LEASE_SECONDS: LEASE_SECONDS }));
    await api.ready;
    const lock = await lockRole(role.id);
    const confirm = fetch(`${api.url}${ACTIONS}/${actionId}/confirm`, { method: 'POST', headers: auth }).catch((err: Error) => err);
    try {
      await toolIsRunning(actionId);
      expect((await api.kill('SIGKILL')).signal).toBe('SIGKILL');
      // The client sees the connection drop: no answer at all.
      expect(await confirm).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
    } finally {
      await api.kill('SIGKILL');
      await lock.release();
    }

    // The worker finds the lapsed lease; the start was committed, so the tool may have run.
    const recovered = await waitFor(
      async () => {
        const s = await state(actionId);
        return s.status === 'executing' ? null : s;
      },
      60_000,
      'the recovery of the interrupted action',
    );
    expect(recovered).toMatchObject({ status: 'failed', executionResult: { error: { code: 'interrupted', message: expect.any(String) } } });

    // Another instance answers the stored failure, the same each time; the tool does not run again.
    for (let i = 0; i < 2; i += 1) {
      const res = await request(t.url).post(`${ACTIONS}/${actionId}/confirm`).set(auth);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 200,
        body: {
          ok: false,
          pendingAction: expect.objectContaining({ id: actionId, status: 'failed', executionResult: recovered.executionResult }),
          mutationResult: recovered.executionResult,
        },
      });
    }
    // The killed process's transaction never committed: the role kept its name.
    expect(await roleName(role.id)).toBe(role.name);
  }, 120_000);

  it('a claim that lapsed before the tool started (the state a crash right after the claim leaves): pending again, and a confirm runs it', async () => {
    const { auth, role, name, actionId, user } = await setup();
    // What the claim of a process that died right after it committed looks like once its lease lapsed.
    await ds.query(
      `UPDATE ai_pending_actions
          SET status = 'executing', resolved_by_user_id = $2, execution_claim_id = gen_random_uuid(),
              execution_lease_until = now() - interval '1 second'
        WHERE id = $1 AND status = 'pending'`,
      [actionId, user.id],
    );
    const recovered = await waitFor(
      async () => {
        const s = await state(actionId);
        return s.status === 'executing' ? null : s;
      },
      60_000,
      'the recovery of the lapsed claim',
    );
    expect(recovered).toMatchObject({ status: 'pending', started: false, leaseUntil: null, executionResult: null });

    const res = await request(t.url).post(`${ACTIONS}/${actionId}/confirm`).set(auth);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: {
        ok: true,
        pendingAction: expect.objectContaining({ id: actionId, status: 'confirmed' }),
        mutationResult: { ok: true, roleId: role.id, name },
      },
    });
    expect(await roleName(role.id)).toBe(name);
  }, 120_000);

  it('a live confirm whose tool takes longer than the lease keeps it (renewed) and is not interrupted', async () => {
    const { auth, role, name, actionId } = await setup();
    const lock = await lockRole(role.id);
    const confirm = Promise.resolve(request(t.url).post(`${ACTIONS}/${actionId}/confirm`).set(auth));
    try {
      const running = await toolIsRunning(actionId);
      // Positive signals first: the lease was renewed past its first end, and that end has passed.
      await waitFor(
        async () => {
          const s = await state(actionId);
          const [{ passed }] = await ds.query('SELECT now() > $1::timestamptz AS passed', [running.leaseUntil]);
          return s.leaseUntil && running.leaseUntil && s.leaseUntil > running.leaseUntil && passed ? true : null;
        },
        15_000,
        'a renewed lease past the first one',
      );
      // A recovery run now leaves it alone.
      expect(await worker.get(PendingActionsJobs).recoverInterrupted()).toEqual({ pending: 0, failed: 0 });
      expect((await state(actionId)).status).toBe('executing');
    } finally {
      await lock.release();
    }
    const res = await confirm;
    expect({ status: res.status, ok: res.body.ok, status2: res.body.pendingAction?.status }).toEqual({
      status: 200,
      ok: true,
      status2: 'confirmed',
    });
    expect(await roleName(role.id)).toBe(name);
  }, 120_000);
});
