import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Job } from 'bullmq';
import type { DataSource } from 'typeorm';
import { QueueService } from '@app/service-kit';
import { waitFor, waitForFinishedJob } from '@app/service-kit/testing';
import { MailWorkflowJob, WORKFLOW_QUEUE, type MailWorkflowStepPayload } from '../src/modules/workflows/workflows.queue.js';
import { createProject } from './support/mail-api-helpers.js';
import { DeliveryHarness } from './support/delivery-harness.js';
import type { MailTestApp } from './support/mail-test-app.js';
import { createWorkflow, startWebhookReceiver, track, waitForExecution, type WebhookReceiver } from './support/workflow-test-kit.js';

/** Statement fragments of the step repository, as pg_stat_activity shows a backend waiting in them. */
const FINISH_SQL = 'SET status = $3, outcome = $4::jsonb';
const CLAIM_ATTEMPT_SQL = 'claimed_until = now() + make_interval';
const TABLE_LOCK_SQL = 'LOCK TABLE workflow_execution_steps';

/**
 * The claim of a WEBHOOK attempt (WorkflowStepsRepository.claimAttempt) against the copies of a step job
 * that at-least-once delivery hands a second worker: BullMQ's redelivery of a job it took for stalled, or
 * the sweep's re-add of a row it read before the row was claimed. The specs that kill workers let the
 * repeat finish the row before the stalled copy comes, so they cannot see a claim that is too loose;
 * here the copy comes while the first attempt holds its claim (its reply held by the receiver), and
 * while its finish is committing. Two in-process workers, one step job at a time each: while the first
 * is in its request, the copy can only run on the other. Real Postgres, Redis and HTTP receiver; the
 * claim (and the job lock) lasts the 5 s webhook timeout + 5 s, far longer than each case.
 */
describe('workflow step claims against duplicate step jobs (two in-process workers)', () => {
  let h: DeliveryHarness;
  let t: MailTestApp;
  let db: DataSource;
  let receiver: WebhookReceiver;
  let key: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    h = await DeliveryHarness.start({ MAIL_WEBHOOK_TIMEOUT_MS: '5000', MAIL_WORKFLOW_SWEEP_SECONDS: '3600' });
    ({ t, db } = h);
    key = (await createProject(t)).secretKey;
    for (let i = 0; i < 2; i += 1) await h.startWorker([WORKFLOW_QUEUE], { workflows: { ...t.config.workflows, concurrency: 1 } });
  });
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  const queue = () => t.app.get(QueueService).queue(WORKFLOW_QUEUE);
  const hooks = (path: string) => receiver.requests.filter((r) => r.url === path);

  /** A WEBHOOK step then another, started by `event`. */
  const hookThenAfter = (event: string) =>
    createWorkflow(t, key, {
      name: event,
      eventName: event,
      enabled: true,
      steps: [
        { id: 'hook', type: 'WEBHOOK', config: { url: `${receiver.url}/${event}` }, next: 'after' },
        { id: 'after', type: 'WEBHOOK', config: { url: `${receiver.url}/${event}-after` } },
      ],
    });

  /** The step job of the `hook` row, once its first attempt's request is at the receiver (its reply held). */
  async function attemptInFlight(event: string): Promise<MailWorkflowStepPayload> {
    receiver.holdNext(60_000);
    const { contact } = await track(t, key, `${event}@claims.test`, event);
    await waitFor(() => (hooks(`/${event}`).length === 1 ? true : null), 10_000, `the ${event} request (its reply held)`);
    const [row] = await db.query<{ id: string; execution_id: string; project_id: string }[]>(
      `SELECT id, execution_id, project_id FROM workflow_execution_steps WHERE contact_id = $1 AND step_id = 'hook'`,
      [contact],
    );
    return { projectId: row.project_id, executionId: row.execution_id, stepRowId: row.id };
  }

  /** The same step job again, under its own id and kept when done (its return value is the signal that it ran). */
  const addCopy = (payload: MailWorkflowStepPayload, name: string) =>
    queue().add(MailWorkflowJob.Step, payload, {
      jobId: `copy_${name}_${payload.stepRowId}`,
      removeOnComplete: false,
      removeOnFail: false,
    });
  /** The copy's outcome once it ran (its error when it failed). */
  async function copyOutcome(job: Job): Promise<string> {
    const finished = await waitForFinishedJob(queue(), job.id!);
    return (finished.returnvalue as { outcome: string } | null)?.outcome ?? `failed: ${finished.failedReason}`;
  }

  /** The execution completed and no job of the queue is left to run. */
  async function settled(workflowId: string): Promise<string> {
    const execution = await waitForExecution(t, key, workflowId, ['COMPLETED', 'FAILED']);
    await waitFor(
      async () => {
        const counts = await queue().getJobCounts('active', 'wait', 'prioritized', 'delayed', 'waiting-children');
        return Object.values(counts).every((n) => n === 0) ? true : null;
      },
      10_000,
      'the workflow queue drained',
    );
    return execution.id;
  }

  /** Everything a repeated visit would change: the step rows and the execution's end. */
  const runState = (executionId: string) =>
    db.query(
      `SELECT s.step_id, s.status, s.attempts, s.outcome, s.completed_at, x.status AS execution_status, x.step_count,
              x.completed_at AS execution_completed_at
         FROM workflow_execution_steps s JOIN workflow_executions x ON x.id = s.execution_id
        WHERE s.execution_id = $1 ORDER BY s.seq`,
      [executionId],
    );
  const stepRows = async (executionId: string) =>
    (await runState(executionId)).map((r: { step_id: string; status: string; attempts: number }) => [r.step_id, r.status, r.attempts]);

  /** Backends of this database waiting for a row lock in each of `fragments` (a statement's text). */
  const waitingInLock = (fragments: string[]) =>
    waitFor(
      async () => {
        const rows = await db.query<{ query: string }[]>(
          `SELECT query FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return fragments.every((f) => rows.some((r) => r.query.includes(f))) ? true : null;
      },
      10_000,
      `statements waiting on the row lock: ${fragments.join(' / ')}`,
    );

  it("a copy of the step job while the first attempt's claim is valid: it sends nothing, and the step completes once", async () => {
    const workflow = await hookThenAfter('held');
    const payload = await attemptInFlight('held');
    const copy = await addCopy(payload, 'held');
    const outcome = await copyOutcome(copy);
    // The copy ran to its end with the first request still open: one request at the receiver, and the
    // claim it met still valid (not one that had lapsed and could be taken over).
    const [{ claim_valid }] = await db.query<{ claim_valid: boolean }[]>(
      `SELECT status = 'RUNNING' AND claimed_until > now() AS claim_valid FROM workflow_execution_steps WHERE id = $1`,
      [payload.stepRowId],
    );
    expect({ outcome, requests: hooks('/held').length, claim_valid }).toEqual({
      outcome: 'attempt held by another run',
      requests: 1,
      claim_valid: true,
    });
    receiver.releaseHeld();
    const executionId = await settled(workflow.id);
    expect({ hook: hooks('/held').length, after: hooks('/held-after').length }).toEqual({ hook: 1, after: 1 });
    expect(await stepRows(executionId)).toEqual([
      ['hook', 'COMPLETED', 1],
      ['after', 'COMPLETED', 1],
    ]);
  });

  it('a copy that read the row RUNNING claims after the first attempt finished it, then a late copy: no second request, one completion, the run unchanged', async () => {
    const workflow = await hookThenAfter('done');
    const payload = await attemptInFlight('done');
    // Two locks of the test's order the copy's visit around the first attempt's finish: the copy reads the
    // row while it is RUNNING, and its claim runs once the finish has committed (the race of a copy whose
    // read and claim straddle the finish). A row lock holds the finish (its transaction already holds its
    // table lock); a SHARE lock on the table, queued behind that transaction, holds every later write of
    // step rows (the copy's claim) but no read (the copy's context).
    const rowLock = db.createQueryRunner();
    const tableLock = db.createQueryRunner();
    let copy: Job;
    try {
      await rowLock.startTransaction();
      await rowLock.query(`SELECT 1 FROM workflow_execution_steps WHERE id = $1 FOR UPDATE`, [payload.stepRowId]);
      receiver.holdNext(60_000, 1, '/done-after');
      receiver.releaseHeld();
      await waitingInLock([FINISH_SQL]);
      await tableLock.startTransaction();
      const shared = tableLock.query(`LOCK TABLE workflow_execution_steps IN SHARE MODE`);
      await waitingInLock([FINISH_SQL, TABLE_LOCK_SQL]);
      copy = await addCopy(payload, 'racing');
      await waitingInLock([FINISH_SQL, TABLE_LOCK_SQL, CLAIM_ATTEMPT_SQL]);
      await rowLock.commitTransaction();
      await shared;
      // The finish committed (the next visit's row with it) while the copy's claim still waits.
      expect((await stepRows(payload.executionId))[0]).toEqual(['hook', 'COMPLETED', 1]);
      await tableLock.commitTransaction();
    } finally {
      for (const runner of [rowLock, tableLock]) {
        if (runner.isTransactionActive) await runner.rollbackTransaction();
        await runner.release();
      }
    }
    // The next step's request is held: the execution is still running when the late copy comes.
    const outcome = await copyOutcome(copy);
    await waitFor(() => (hooks('/done-after').length === 1 ? true : null), 10_000, 'the next step’s request (its reply held)');
    expect({ outcome, requests: hooks('/done').length }).toEqual({ outcome: 'attempt held by another run', requests: 1 });

    // A copy that comes after the finish (a stalled job's late redelivery) finds the row finished.
    const before = await runState(payload.executionId);
    const late = await copyOutcome(await addCopy(payload, 'late'));
    expect({ late, requests: hooks('/done').length }).toEqual({ late: 'step COMPLETED', requests: 1 });
    expect(await runState(payload.executionId)).toEqual(before);

    receiver.releaseHeld();
    const executionId = await settled(workflow.id);
    expect({ hook: hooks('/done').length, after: hooks('/done-after').length }).toEqual({ hook: 1, after: 1 });
    expect(await stepRows(executionId)).toEqual([
      ['hook', 'COMPLETED', 1],
      ['after', 'COMPLETED', 1],
    ]);
  });
});
