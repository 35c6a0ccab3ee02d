import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { WorkerFleet } from './support/worker-fleet.js';
import {
  createWorkflow,
  startWorkflowFleet,
  track,
  waitForExecutions,
  type ProjectWithTemplate,
  type WebhookReceiver,
} from './support/workflow-test-kit.js';

const DOMAIN = 'recovery.example.com';

/**
 * Each step runs at most once through worker crashes and a Redis flush: real worker processes
 * (`node dist/worker.js`, built by `npm run build -w mail-api`) on a private Redis this spec may flush,
 * real Postgres, an SMTP sink and an HTTP receiver. The sweeps run every second here.
 */
describe('workflow recovery (worker processes, private Redis)', () => {
  let fleet: WorkerFleet;
  let flusher: Redis;
  let receiver: WebhookReceiver;
  let setup: ProjectWithTemplate;

  beforeAll(async () => {
    ({ fleet, receiver, setup } = await startWorkflowFleet(
      DOMAIN,
      { name: 'T', subject: 'Welcome {{email}}', body: '<p>Hi</p>', from: `team@${DOMAIN}` },
      // An email whose send the kill interrupts is taken over after this.
      { MAIL_SEND_LOCK_SECONDS: '2' },
    ));
    flusher = new Redis(fleet.redis!.url);
  });
  afterEach(() => fleet.stopWorkers());
  afterAll(async () => {
    flusher?.disconnect();
    await fleet?.close();
    await receiver?.close();
  });

  const startWorker = (name: string) => fleet.startWorker(name);

  /** Every step row of an execution: one per visit, with its attempts. */
  const stepRows = (executionId: string) =>
    fleet.db.query<{ step_id: string; status: string; attempts: number }[]>(
      `SELECT step_id, status, attempts FROM workflow_execution_steps WHERE execution_id = $1 ORDER BY seq`,
      [executionId],
    );
  const hooksFor = (path: string) => receiver.requests.filter((r) => r.url === path);

  it('a worker killed during a DELAY: another resumes the execution and no step runs twice', async () => {
    const { t, sink, db } = fleet;
    const { key, templateId } = setup;
    const workflow = await createWorkflow(t, key, {
      name: 'Crash',
      eventName: 'joined',
      enabled: true,
      steps: [
        { id: 'send', type: 'SEND_EMAIL', config: { templateId }, next: 'before' },
        { id: 'before', type: 'WEBHOOK', config: { url: `${receiver.url}/before` }, next: 'pause' },
        { id: 'pause', type: 'DELAY', config: { amount: 2, unit: 'seconds' }, next: 'after' },
        { id: 'after', type: 'WEBHOOK', config: { url: `${receiver.url}/after` } },
      ],
    });
    const a = await startWorker('A');
    const { contact } = await track(t, key, 'crash@recovery.test', 'joined');
    const [waiting] = await waitForExecutions(
      t,
      key,
      workflow.id,
      (list) => list[0]?.status === 'WAITING' && list[0].currentStepId === 'pause',
    );
    // The SEND_EMAIL step's email goes through the marketing feeder: let A hand it to SMTP before the kill, so
    // the kill lands in the DELAY this test is about (a kill mid-SMTP is delivery-workers' and the drills' case,
    // recovered after the 30 s send lock).
    await sink.waitForMessages((all) => all.some((m) => m.envelope.to.includes('crash@recovery.test')));
    await a.kill('SIGKILL');
    const b = await startWorker('B');
    const [done] = await waitForExecutions(t, key, workflow.id, (list) => list[0]?.status === 'COMPLETED', 20_000);
    expect(done.id).toBe(waiting.id);
    expect(await stepRows(done.id)).toEqual(
      ['send', 'before', 'pause', 'after'].map((step_id) => ({ step_id, status: 'COMPLETED', attempts: 1 })),
    );
    expect(hooksFor('/before')).toHaveLength(1);
    expect(hooksFor('/after')).toHaveLength(1);
    const emails = await db.query(`SELECT id, status FROM emails WHERE contact_id = $1`, [contact]);
    expect(emails).toHaveLength(1);
    expect(sink.messages.filter((m) => m.envelope.to.includes('crash@recovery.test'))).toHaveLength(1);
    // The webhook secret signs requests; it never appears in the workers' logs.
    expect(a.output() + b.output()).not.toContain(workflow.webhookSecret);
  }, 60_000);

  it('a Redis flush during a WAIT: the awaited event still resumes it, the timeout still fires, and a lost start is caught up', async () => {
    const { t } = fleet;
    const { key } = setup;
    const workflow = await createWorkflow(t, key, {
      name: 'Flush',
      eventName: 'registered',
      enabled: true,
      steps: [
        { id: 'wait', type: 'WAIT_FOR_EVENT', config: { eventName: 'confirmed', timeoutSeconds: 3 }, next: 'yes', onTimeout: 'no' },
        { id: 'yes', type: 'WEBHOOK', config: { url: `${receiver.url}/yes` } },
        { id: 'no', type: 'WEBHOOK', config: { url: `${receiver.url}/no` } },
      ],
    });
    const a = await startWorker('A');
    const confirmed = await track(t, key, 'confirmed@recovery.test', 'registered');
    const silent = await track(t, key, 'silent@recovery.test', 'registered');
    await waitForExecutions(t, key, workflow.id, (list) => list.length === 2 && list.every((e) => e.status === 'WAITING'));
    // The two WAITs' timeout timers are delayed jobs in Redis; the flush drops them with every other
    // job and schedule, and Postgres still has the waits. (No emptiness check after the flush: worker A
    // keeps running, and its sweep re-adds what is due within the second, which is the point.)
    expect((await flusher.keys('*:wfs_*_due')).length).toBe(2);
    expect(await flusher.flushall()).toBe('OK');
    await track(t, key, 'confirmed@recovery.test', 'confirmed');
    const done = await waitForExecutions(
      t,
      key,
      workflow.id,
      (list) => list.length === 2 && list.every((e) => e.status === 'COMPLETED'),
      20_000,
    );
    const byContact = new Map(done.map((e) => [e.contactId, e]));
    expect(byContact.get(confirmed.contact)!.steps.map((s) => s.stepId)).toEqual(['wait', 'yes']);
    expect(byContact.get(silent.contact)!.steps.map((s) => s.stepId)).toEqual(['wait', 'no']);
    expect(hooksFor('/yes')).toHaveLength(1);
    expect(hooksFor('/no')).toHaveLength(1);
    for (const execution of done) {
      expect((await stepRows(execution.id)).every((row) => row.status === 'COMPLETED' && row.attempts === 1)).toBe(true);
    }

    // A start whose trigger job is lost with Redis (no worker took it yet): the sweep's catch-up starts it, once.
    await a.kill('SIGTERM');
    const late = await track(t, key, 'late@recovery.test', 'registered');
    await flusher.flushall();
    await startWorker('B');
    const caught = await waitForExecutions(
      t,
      key,
      workflow.id,
      (list) => list.some((e) => e.contactId === late.contact && e.status === 'WAITING'),
      20_000,
    );
    expect(caught.filter((e) => e.contactId === late.contact)).toHaveLength(1);
    await track(t, key, 'late@recovery.test', 'confirmed');
    await waitForExecutions(t, key, workflow.id, (list) => list.length === 3 && list.every((e) => e.status === 'COMPLETED'), 20_000);
    expect(hooksFor('/yes')).toHaveLength(2);
    expect(hooksFor('/no')).toHaveLength(1);
  }, 60_000);
});
