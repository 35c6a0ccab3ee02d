import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { QueueService } from '@app/service-kit';
import { waitFor } from '@app/service-kit/testing';
import { EMAIL_QUEUE } from '../src/modules/delivery/email-delivery.queue.js';
import { WORKFLOW_QUEUE } from '../src/modules/workflows/workflows.queue.js';
import type { WorkerFleet } from './support/worker-fleet.js';
import { workerOwningConnection, type WorkerProcess } from './support/worker-process.js';
import {
  createWorkflow,
  listExecutions,
  startWorkflowFleet,
  track,
  type ProjectWithTemplate,
  type WebhookReceiver,
} from './support/workflow-test-kit.js';

const DOMAIN = 'midstep.example.com';
const CONTACT = 'midstep@recovery.test';
/** Job states that mean work is still to come (a killed worker's job stays `active` until its lock lapses). */
const UNFINISHED = ['active', 'wait', 'delayed', 'prioritized', 'waiting-children'] as const;

/**
 * Worker processes (`node dist/worker.js`) SIGKILLed in the middle of a step's outside effect: while the
 * receiver holds a WEBHOOK step's reply, then while the SMTP sink holds the DATA answer of a SEND_EMAIL
 * step's email. Each kill lands on a positive signal (the request arrived; the DATA was read and its answer
 * is held), and the assertions wait for the drain (the execution completed, the email is SENT, no job is
 * left in either queue, the killed workers' stalled jobs included), so a late duplicate is counted too:
 * at most the one in-flight repeat of the webhook, under one delivery id; one accepted copy of the email
 * (the killed transaction never got its 250) with one Message-ID; one completion.
 */
describe('workflow steps killed mid-effect (worker processes, private Redis)', () => {
  let fleet: WorkerFleet;
  let receiver: WebhookReceiver;
  let setup: ProjectWithTemplate;

  beforeAll(async () => {
    ({ fleet, receiver, setup } = await startWorkflowFleet(
      DOMAIN,
      { name: 'T', subject: 'Hello {{email}}', body: '<p>Hi</p>', from: `team@${DOMAIN}` },
      {
        // A killed attempt's claim (and the step job's lock) lapses after 2 s + 5 s. The held request stays
        // open for those 2 s: the window in which the test must kill its sender (0.2 s was too short when
        // the machine was loaded).
        MAIL_WEBHOOK_TIMEOUT_MS: '2000',
        // An email whose send the kill interrupts is taken over after this.
        MAIL_SEND_LOCK_SECONDS: '1',
      },
    ));
    // Three workers, booted together before the test (a boot takes seconds, and up to a minute on a loaded
    // machine: not the test's budget); each kill hits the one the server sees the effect coming from
    // (`workerOwningConnection`).
    await fleet.startWorkers(['A', 'B', 'C']);
  }, 120_000);
  afterAll(async () => {
    await fleet?.close();
    await receiver?.close();
  });

  /** What the spec saw so far, for a wait that timed out. */
  const seen = async () =>
    JSON.stringify({
      webhookRequests: receiver.requests.map((r) => `${r.url} ${String(r.headers['x-webhook-id'])}`),
      dataTransfers: fleet.sink.stats.dataReceived,
      acceptedCopies: fleet.sink.messages.filter((m) => m.envelope.to.includes(CONTACT)).length,
      emails: await fleet.db.query(`SELECT status, attempts FROM emails WHERE project_id = $1`, [setup.project.id]),
      unfinished: { workflow: await unfinishedJobs(WORKFLOW_QUEUE), email: await unfinishedJobs(EMAIL_QUEUE) },
    });

  /** Jobs still to run in a queue, by state (an empty object once drained). */
  async function unfinishedJobs(queue: string): Promise<Record<string, number>> {
    const counts = await fleet.t.app
      .get(QueueService)
      .queue(queue)
      .getJobCounts(...UNFINISHED);
    return Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));
  }

  it('a WEBHOOK reply held and a SEND_EMAIL mid-SMTP: one in-flight repeat each, one delivery id, one Message-ID, one completion', async () => {
    const { t, sink, db } = fleet;
    const { project, key, templateId } = setup;
    const workflow = await createWorkflow(t, key, {
      name: 'Killed mid-step',
      eventName: 'signed_up',
      enabled: true,
      steps: [
        { id: 'hook', type: 'WEBHOOK', config: { url: `${receiver.url}/hook` }, next: 'send' },
        { id: 'send', type: 'SEND_EMAIL', config: { templateId }, next: 'after' },
        { id: 'after', type: 'WEBHOOK', config: { url: `${receiver.url}/after` } },
      ],
    });
    const hooks = (path: string) => receiver.requests.filter((r) => r.url === path);
    // One deadline for every wait, inside the test's timeout: a wait that never ends fails naming what it waited for.
    const deadline = Date.now() + 50_000;
    const until = async <T>(probe: () => T | null | Promise<T | null>, what: string): Promise<T> => {
      try {
        return await waitFor(probe, Math.max(0, deadline - Date.now()), what);
      } catch (err) {
        throw new Error(`${(err as Error).message}; seen: ${await seen()}`, { cause: err });
      }
    };

    const running = fleet.workers;
    const alive = () => fleet.alive();

    // (a) One worker takes the WEBHOOK step; the receiver holds its reply; that worker dies with the request open.
    // The sender is found as the request begins, while its connection is surely open (a lookup after the
    // wait below found none on a loaded machine, once the step's timeout had closed it).
    receiver.holdNext(120_000);
    receiver.tagArrivals((clientPort) => workerOwningConnection(running, clientPort));
    await track(t, key, CONTACT, 'signed_up');
    await until(() => (hooks('/hook').length === 1 ? true : null), 'the webhook request to arrive (its reply held)');
    const hookSender = hooks('/hook')[0].tag as WorkerProcess | null;
    expect(hookSender).not.toBeNull();
    const dataBefore = sink.stats.dataReceived;
    sink.delayNextData(120_000);
    await hookSender!.kill('SIGKILL');
    expect(hooks('/after')).toHaveLength(0);

    // (b) Another repeats the webhook once the claim lapsed and the email is fed; the sink holds its DATA
    // answer; the worker sending it dies mid-SMTP.
    const clientPort = await until(() => [...sink.heldClientPorts][0] ?? null, 'the email to be mid-SMTP (DATA read, answer held)');
    const [midSend] = await db.query<{ id: string; status: string }[]>(`SELECT id, status FROM emails WHERE project_id = $1`, [project.id]);
    expect(midSend.status).toBe('SENDING');
    expect(sink.messagesFor([midSend.id])).toHaveLength(0);
    const emailSender = workerOwningConnection(alive(), clientPort);
    expect(emailSender).not.toBeNull();
    await emailSender!.kill('SIGKILL');
    expect(alive()).toHaveLength(1);

    // The last worker takes over the email after its send lock, and the killed workers' stalled jobs after theirs.
    const [done] = await until(async () => {
      const list = await listExecutions(t, key, workflow.id);
      return list[0]?.status === 'COMPLETED' ? list : null;
    }, 'the execution to complete');
    await until(async () => {
      const [email] = await db.query<{ status: string }[]>(`SELECT status FROM emails WHERE id = $1`, [midSend.id]);
      if (email.status !== 'SENT') return null;
      const left = { workflow: await unfinishedJobs(WORKFLOW_QUEUE), email: await unfinishedJobs(EMAIL_QUEUE) };
      return Object.keys(left.workflow).length + Object.keys(left.email).length === 0 ? true : null;
    }, 'the email SENT and both queues drained (the killed workers’ stalled jobs re-run)');

    // The webhook: the killed attempt and its one repeat, both under the visit's delivery id; `after` once.
    const hookIds = hooks('/hook').map((r) => r.headers['x-webhook-id']);
    expect(hookIds).toHaveLength(2);
    expect(new Set(hookIds)).toEqual(new Set([`${done.id}.hook.1`]));
    expect(hooks('/after')).toHaveLength(1);
    // The email: the killed transaction and its repeat reached DATA; the sink accepted one copy, one Message-ID.
    expect(sink.stats.dataReceived - dataBefore).toBe(2);
    const copies = sink.messages.filter((m) => m.envelope.to.includes(CONTACT));
    expect(copies).toHaveLength(1);
    expect(copies[0].messageId).toMatch(new RegExp(`^<${midSend.id}@`));
    expect(await db.query(`SELECT count(*)::int AS n FROM emails WHERE project_id = $1`, [project.id])).toEqual([{ n: 1 }]);
    // One execution, completed once; each step visited once (the webhook's attempts count the killed one).
    const executions = await db.query<{ id: string; status: string }[]>(
      `SELECT id, status FROM workflow_executions WHERE workflow_id = $1 AND completed_at IS NOT NULL`,
      [workflow.id],
    );
    expect(executions).toEqual([{ id: done.id, status: 'COMPLETED' }]);
    expect(
      await db.query(`SELECT step_id, status, attempts FROM workflow_execution_steps WHERE execution_id = $1 ORDER BY seq`, [done.id]),
    ).toEqual([
      { step_id: 'hook', status: 'COMPLETED', attempts: 2 },
      { step_id: 'send', status: 'COMPLETED', attempts: 1 },
      { step_id: 'after', status: 'COMPLETED', attempts: 1 },
    ]);
    expect(running.map((w) => w.output()).join('')).not.toContain(workflow.webhookSecret);
  }, 60_000);
});
