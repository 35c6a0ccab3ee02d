import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials, MailTrackedEvent } from '@app/contracts';
import { listen, MetricsModule, MetricsRegistry, QueueService, WorkerRunner } from '@app/service-kit';
import { waitFor } from '@app/service-kit/testing';
import { createMailHttpApp } from '../src/http-setup.js';
import { EMAIL_QUEUE, MailEmailPriority } from '../src/modules/delivery/email-delivery.queue.js';
import { MAINTENANCE_QUEUE, MailMaintenanceJob } from '../src/modules/maintenance/maintenance.queue.js';
import { MailWorkflowJob, WORKFLOW_QUEUE, type MailWorkflowTriggerPayload } from '../src/modules/workflows/workflows.queue.js';
import { WorkerModule } from '../src/worker.module.js';
import { bearer } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';
import { createProjectWithTemplate, createWorkflow, track } from './support/workflow-test-kit.js';

const DOMAIN = 'safety.example.com';
const SKIPPED_METRIC = 'mail_workflow_starts_skipped_total';

@Module({})
class MeasuredWorkerRoot {}

/**
 * decisions.md "Workflow and tracking safety", end to end: events tracked over HTTP (two API instances)
 * and the service's own `email.*` events start executions that two real workers (in process, with their
 * Prometheus registries) run against real Postgres, Redis and an SMTP sink.
 */
describe('workflow run safety (real Postgres, Redis, SMTP sink, two API instances and two workers)', () => {
  let t: MailTestApp;
  let second: NestExpressApplication;
  let secondUrl: string;
  let sink: SmtpSink;
  let db: DataSource;
  let queues: QueueService;
  const workers: INestApplicationContext[] = [];
  let project: MailProjectCredentials;
  let key: string;
  let templateId: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startMailApp({
      env: { MAIL_SMTP_URL: sink.url, MAIL_WORKFLOW_SWEEP_SECONDS: '3600', MAIL_PUBLIC_RATE_LIMIT_PER_IP_PER_MINUTE: '10000' },
    });
    second = await createMailHttpApp(t.config);
    secondUrl = await listen(second, 0, '127.0.0.1');
    db = t.app.get(DataSource);
    queues = t.app.get(QueueService);
    for (let i = 0; i < 2; i += 1) {
      const root = {
        module: MeasuredWorkerRoot,
        imports: [WorkerModule.forRoot(t.config), MetricsModule.forRoot({ service: 'mail-worker', queueNamePrefix: 'mail-' })],
      };
      const worker = await NestFactory.createApplicationContext(root, { logger: false });
      await worker.get(WorkerRunner).start({ queues: [WORKFLOW_QUEUE, EMAIL_QUEUE, MAINTENANCE_QUEUE] });
      workers.push(worker);
    }
  });
  afterAll(async () => {
    for (const worker of workers) await worker.close();
    await second?.close();
    await t?.close();
    await sink?.close();
  });

  /**
   * Each test its own project: a worker remembers a project's trigger names for a few seconds (a
   * workflow created meanwhile is caught up by the sweep, which these tests do not wait for), and a new
   * project's names are read after its workflows exist.
   */
  beforeEach(async () => {
    ({ project, key, templateId } = await createProjectWithTemplate(t, DOMAIN, {
      name: 'Notice',
      subject: 'Notice',
      body: '<p>Hello {{email}}</p>',
      from: `hello@${DOMAIN}`,
    }));
  });

  /** No job of the queue is waiting, running, delayed or held (the positive signal that its work is done). */
  const drained = async (queue: string): Promise<boolean> => {
    const counts = await queues.queue(queue).getJobCounts('active', 'waiting', 'prioritized', 'delayed', 'waiting-children');
    return Object.values(counts).every((n) => n === 0);
  };
  const executionsOf = async (workflowId: string) => {
    const res = await request(t.url).get(`/workflows/${workflowId}/executions?limit=100`).set(bearer(key)).expect(200);
    return res.body as { items: { contactId: string; status: string }[]; total: number };
  };
  const eventsOf = async (email: string, name: string): Promise<MailTrackedEvent[]> => {
    const res = await request(t.url)
      .get(`/events?email=${encodeURIComponent(email)}&name=${name}&limit=100`)
      .set(bearer(key))
      .expect(200);
    return res.body.items as MailTrackedEvent[];
  };
  /** A workflow (re-entry allowed) of two SEND_EMAIL steps, started by `eventName`. */
  const twoEmailsOn = (name: string, eventName: string) =>
    createWorkflow(t, key, {
      name,
      eventName,
      enabled: true,
      allowReentry: true,
      steps: [
        { id: 'first', type: 'SEND_EMAIL', config: { templateId }, next: 'second' },
        { id: 'second', type: 'SEND_EMAIL', config: { templateId } },
      ],
    });
  /** A transactional email to `address` (its `email.*` events are the workflows' triggers). */
  const sendReceipt = (address: string) =>
    request(t.url)
      .post('/v1/send')
      .set(bearer(key))
      .send({ to: address, from: `hello@${DOMAIN}`, subject: 'Receipt', body: '<p>Receipt</p>' })
      .expect(200);
  /** `count` email.suppressed events of `address`, and both queues drained. */
  const suppressedAndDrained = (address: string, count: number) =>
    waitFor(
      async () =>
        (await eventsOf(address, 'email.suppressed')).length === count && (await drained(EMAIL_QUEUE)) && (await drained(WORKFLOW_QUEUE))
          ? true
          : null,
      30_000,
      `${count} email.suppressed events and drained queues`,
    );
  const skippedCount = async (): Promise<number> => {
    let total = 0;
    for (const worker of workers) {
      const metric = worker.get(MetricsRegistry).registry.getSingleMetric(SKIPPED_METRIC);
      total += (await metric!.get()).values.reduce((sum, v) => sum + v.value, 0);
    }
    return total;
  };

  it('a bounce-triggered workflow with allowReentry and two SEND_EMAIL steps to a bouncing address runs once: the bounce suppressed the address, so its emails are SUPPRESSED and do not restart it', async () => {
    // Since #28 a hard bounce suppresses the address: the workflow's emails to it never reach the relay
    // (no second and third bounce, as before #28), and their own `email.suppressed` events start nothing.
    const workflow = await twoEmailsOn('Bounce follow-up', 'email.bounced');
    const address = 'bouncy@safety.test';
    sink.refuseNext(550, 1);
    await sendReceipt(address);
    await suppressedAndDrained(address, 2);
    const runs = await executionsOf(workflow.id);
    expect(runs.items.map((e) => e.status)).toEqual(['COMPLETED']);
    expect(sink.refusals.filter((r) => r.code === 550)).toHaveLength(1);
    const emails = await db.query<{ workflow_id: string | null; status: string }[]>(
      `SELECT workflow_id, status FROM emails WHERE project_id = $1 AND to_email = $2 ORDER BY id`,
      [project.id, address],
    );
    expect(emails.map((e) => [e.workflow_id, e.status])).toEqual([
      [null, 'FAILED'],
      [workflow.id, 'SUPPRESSED'],
      [workflow.id, 'SUPPRESSED'],
    ]);
    expect((await eventsOf(address, 'email.bounced')).length).toBe(1);
  }, 60_000);

  it("a workflow started by email.suppressed (allowReentry, two SEND_EMAIL steps) runs once: its own emails' email.suppressed events do not restart it", async () => {
    // The loop the bounce test above guarded before #28, with the events a suppressed address now makes.
    const workflow = await twoEmailsOn('Suppressed follow-up', 'email.suppressed');
    const address = 'listed@safety.test';
    await request(t.url).post('/suppressions').set(bearer(key)).send({ email: address }).expect(201);
    await track(t, key, address, 'created'); // the contact the /v1/send email's event belongs to
    await sendReceipt(address);
    await suppressedAndDrained(address, 3);
    const runs = await executionsOf(workflow.id);
    expect(runs.items.map((e) => e.status)).toEqual(['COMPLETED']);
    expect(sink.messages.filter((m) => m.envelope.to.includes(address))).toHaveLength(0);
  }, 60_000);

  it("a workflow's own email.sent does not restart it, and another workflow on email.sent still starts from it", async () => {
    const kickoff = await createWorkflow(t, key, {
      name: 'Kickoff',
      eventName: 'kickoff',
      enabled: true,
      steps: [{ id: 'mail', type: 'SEND_EMAIL', config: { templateId } }],
    });
    const echo = await createWorkflow(t, key, {
      name: 'Echo on sent',
      eventName: 'email.sent',
      enabled: true,
      allowReentry: true,
      steps: [{ id: 'mail', type: 'SEND_EMAIL', config: { templateId } }],
    });
    const observer = await createWorkflow(t, key, {
      name: 'Observer on sent',
      eventName: 'email.sent',
      enabled: true,
      allowReentry: true,
      steps: [{ id: 'note', type: 'UPDATE_CONTACT', config: { data: { mailed: true } } }],
    });
    const address = 'echo@safety.test';
    const { contact } = await track(t, key, address, 'kickoff');

    // Kickoff's email starts Echo and Observer; Echo's email starts Observer again, not Echo.
    await waitFor(
      async () => {
        const observed = await executionsOf(observer.id);
        const done = observed.total === 2 && observed.items.every((e) => e.status === 'COMPLETED');
        return done && (await drained(EMAIL_QUEUE)) && (await drained(WORKFLOW_QUEUE)) ? true : null;
      },
      30_000,
      'two Observer runs and drained queues',
    );
    expect((await eventsOf(address, 'email.sent')).length).toBe(2);
    const echoes = await executionsOf(echo.id);
    expect({ total: echoes.total, contacts: echoes.items.map((e) => e.contactId) }).toEqual({ total: 1, contacts: [contact] });
    expect((await executionsOf(kickoff.id)).total).toBe(1);
    expect(sink.messages.filter((m) => m.envelope.to.includes(address))).toHaveLength(2);
  }, 60_000);

  it('25 concurrent triggers for one contact (two API instances, two workers) start exactly MAIL_WORKFLOW_MAX_RUNS_PER_DAY (20) executions; the rest are counted', async () => {
    expect(t.config.workflows.maxRunsPerDay).toBe(20);
    const workflow = await createWorkflow(t, key, {
      name: 'Ping',
      eventName: 'ping',
      enabled: true,
      allowReentry: true,
      steps: [{ id: 'note', type: 'UPDATE_CONTACT', config: { data: { pinged: true } } }],
    });
    const skippedBefore = await skippedCount();
    const queue = queues.queue(WORKFLOW_QUEUE);
    const queuedEvents = async () =>
      (await queue.getJobs(['wait', 'prioritized']))
        .filter((job) => job?.name === MailWorkflowJob.Trigger)
        .reduce((sum, job) => sum + (job.data as MailWorkflowTriggerPayload).eventIds.length, 0);
    // Hold the trigger jobs until all 25 are queued, so the workers start them together.
    await queue.pause();
    try {
      const urls = [t.url, secondUrl];
      for (let wave = 0; wave < 5; wave += 1) {
        await Promise.all(
          Array.from({ length: 5 }, (_, i) =>
            request(urls[i % 2])
              .post('/v1/track')
              .set(bearer(project.publicKey))
              .send({ email: 'pinger@safety.test', event: 'ping' })
              .expect(200),
          ),
        );
      }
      await waitFor(async () => ((await queuedEvents()) === 25 ? true : null), 15_000, '25 events in queued trigger jobs');
      const triggerJobs = (await queue.getJobs(['wait', 'prioritized'])).filter((job) => job?.name === MailWorkflowJob.Trigger);
      expect(triggerJobs.length).toBeGreaterThanOrEqual(5); // one per track batch, at least one per wave
    } finally {
      await queue.resume();
    }
    await waitFor(
      async () => {
        const runs = await executionsOf(workflow.id);
        return (await drained(WORKFLOW_QUEUE)) && runs.items.every((e) => e.status === 'COMPLETED') ? runs : null;
      },
      30_000,
      'trigger and step jobs finished',
    );
    const runs = await executionsOf(workflow.id);
    expect(runs.total).toBe(20);
    expect(await skippedCount()).toBe(skippedBefore + 5);

    // A later trigger is skipped too (the window is 24 h), and another contact is not held back.
    await track(t, key, 'pinger@safety.test', 'ping');
    await track(t, key, 'other-pinger@safety.test', 'ping');
    await waitFor(
      async () => {
        const all = await executionsOf(workflow.id);
        const counted = (await skippedCount()) === skippedBefore + 6;
        return counted && all.total === 21 && all.items.every((e) => e.status === 'COMPLETED') && (await drained(WORKFLOW_QUEUE))
          ? true
          : null;
      },
      15_000,
      "the other contact's run and the sixth skipped trigger",
    );
    const all = await executionsOf(workflow.id);
    expect(all.items.filter((e) => e.contactId !== runs.items[0].contactId)).toHaveLength(1);
  }, 90_000);

  it('a workflow email is marketing (workflow) priority even from a TRANSACTIONAL template: at first enqueue and when the sweep requeues its lost job', async () => {
    const workflow = await createWorkflow(t, key, {
      name: 'Order follow-up',
      eventName: 'ordered',
      enabled: true,
      steps: [{ id: 'mail', type: 'SEND_EMAIL', config: { templateId } }],
    });
    const emailQueue = queues.queue(EMAIL_QUEUE);
    // Held in Redis, so the jobs can be read (and lost) before a worker takes them.
    await emailQueue.pause();
    let ids: string[];
    try {
      await track(t, key, 'buyer@safety.test', 'ordered');
      await request(t.url)
        .post('/v1/send')
        .set(bearer(key))
        .send({ to: 'receipt@safety.test', from: `hello@${DOMAIN}`, subject: 'Receipt', body: '<p>Receipt</p>' })
        .expect(200);
      const rows = await waitFor(
        async () => {
          const found = await db.query<{ id: string; type: string; workflow_id: string | null }[]>(
            `SELECT id, type, workflow_id FROM emails WHERE project_id = $1 ORDER BY workflow_id NULLS LAST`,
            [project.id],
          );
          return found.length === 2 ? found : null;
        },
        15_000,
        'the workflow email and the sent one',
      );
      expect(rows.map((r) => [r.type, r.workflow_id])).toEqual([
        ['TRANSACTIONAL', workflow.id],
        ['TRANSACTIONAL', null],
      ]);
      ids = rows.map((r) => r.id);
      const jobsOf = async () => {
        const jobs = await Promise.all(ids.map((id) => emailQueue.getJob(id)));
        return jobs.every(Boolean) ? jobs.map((job) => ({ priority: job!.priority, optsPriority: job!.opts.priority })) : null;
      };
      const expected = [
        { priority: MailEmailPriority.Workflow, optsPriority: MailEmailPriority.Workflow },
        { priority: MailEmailPriority.Transactional, optsPriority: MailEmailPriority.Transactional },
      ];
      // First enqueue: the workflow's job behind transactional mail.
      expect(await waitFor(jobsOf, 15_000, 'both delivery jobs')).toEqual(expected);

      // Redis loses both jobs; the rows are a minute old (the requeue sweep's threshold for "lost").
      for (const id of ids) expect(await emailQueue.remove(id)).toBe(1);
      expect(await jobsOf()).toBeNull();
      await db.query(`UPDATE emails SET queued_at = now() - interval '2 minutes' WHERE id = ANY($1::uuid[])`, [ids]);
      await queues.add(MAINTENANCE_QUEUE, MailMaintenanceJob.RequeueEmails, {});
      expect(await waitFor(jobsOf, 15_000, 'the requeued delivery jobs')).toEqual(expected);
    } finally {
      await emailQueue.resume();
    }
    await sink.waitForMessages(() => ids.every((id) => sink.messagesFor([id]).length === 1));
  }, 60_000);
});
