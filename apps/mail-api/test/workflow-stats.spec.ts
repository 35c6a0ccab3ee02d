import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { startInProcessWorker } from '@app/service-kit/testing';
import { EMAIL_QUEUE } from '../src/modules/delivery/email-delivery.queue.js';
import type { MailWorkflowStats } from '../src/modules/workflows/workflow-stats.dto.js';
import { WORKFLOW_QUEUE } from '../src/modules/workflows/workflows.queue.js';
import { WorkerModule } from '../src/worker.module.js';
import { insertVerifiedDomain, waitFor } from './support/delivery-fixtures.js';
import { bearer, createProject, expectMailError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { startSmtpSink, type SmtpSink } from './support/smtp-sink.js';
import { createWorkflow, listExecutions, waitForExecutions } from './support/workflow-test-kit.js';

const DOMAIN = 'wfstats.example.com';
const PUBLIC_URL = 'https://mail.test';
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0';
const SCANNER = 'Mozilla/5.0 (compatible; BingPreview/1.0b)';

/**
 * GET /workflows/{id}/stats after a real run (worker in process, SMTP sink): a CONDITION sends two
 * contacts down one branch and one down the other, a WAIT_FOR_EVENT is answered by one contact and
 * times out for the other; a person opens and clicks one email, a scanner opens the other. The stats
 * must match the executions as GET /workflows/{id}/executions reports them.
 */
describe('workflow stats (real Postgres, Redis, SMTP sink)', () => {
  let t: MailTestApp;
  let sink: SmtpSink;
  let db: DataSource;
  let worker: INestApplicationContext;
  let project: MailProjectCredentials;
  let key: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    // The seconds-after-delivery machine rule is off: the person opens at once here (engagement-analytics.spec tests it).
    t = await startMailApp({
      env: { MAIL_SMTP_URL: sink.url, MAIL_PUBLIC_URL: PUBLIC_URL, MAIL_MACHINE_WINDOW_S: '0', MAIL_WORKFLOW_SWEEP_SECONDS: '3600' },
    });
    db = t.app.get(DataSource);
    project = await createProject(t, 'Workflow stats');
    key = project.secretKey;
    await insertVerifiedDomain(db, project.id, DOMAIN);
    worker = await startInProcessWorker(WorkerModule.forRoot(t.config), { queues: [WORKFLOW_QUEUE, EMAIL_QUEUE] });
  });
  afterAll(async () => {
    await worker?.close();
    await t?.close();
    await sink?.close();
  });

  const trackEvent = (email: string, event: string, data?: Record<string, unknown>) =>
    request(t.url).post('/v1/track').set(bearer(key)).send({ email, event, data, subscribed: true }).expect(200);

  it('match the executions after a run with a CONDITION branch and a WAIT_FOR_EVENT timeout', async () => {
    const template = await request(t.url)
      .post('/templates')
      .set(bearer(key))
      .send({
        name: 'Offer',
        type: 'MARKETING',
        subject: 'Offer',
        body: '<p>Hi <a href="https://shop.example/offer">see the offer</a></p>',
        from: `offers@${DOMAIN}`,
      })
      .expect(201);
    const workflow = await createWorkflow(t, key, {
      name: 'Pro offer',
      eventName: 'stats-start',
      enabled: true,
      steps: [
        {
          id: 'check',
          type: 'CONDITION',
          config: { field: 'data.plan', operator: 'equals', value: 'pro' },
          onTrue: 'mail',
          onFalse: 'bye',
        },
        { id: 'mail', type: 'SEND_EMAIL', config: { templateId: template.body.id }, next: 'wait' },
        { id: 'wait', type: 'WAIT_FOR_EVENT', config: { eventName: 'replied', timeoutSeconds: 6 }, next: 'replied', onTimeout: null },
        { id: 'replied', type: 'EXIT', config: {} },
        { id: 'bye', type: 'EXIT', config: {} },
        { id: 'unused', type: 'EXIT', config: {} },
      ],
    });
    const [answers, silent, free] = ['answers@wfstats.test', 'silent@wfstats.test', 'free@wfstats.test'];
    const answersContact = (await trackEvent(answers, 'stats-start', { plan: 'pro' })).body.data.contact as string;
    await trackEvent(silent, 'stats-start', { plan: 'pro' });
    await trackEvent(free, 'stats-start', { plan: 'free' });

    // `answers` replies while its execution waits (an event before the wait started would not count); `silent` lets it time out.
    await waitForExecutions(
      t,
      key,
      workflow.id,
      (items) => items.some((x) => x.contactId === answersContact && x.steps.some((s) => s.stepId === 'wait' && s.status === 'WAITING')),
      20_000,
      "answers' wait",
    );
    await trackEvent(answers, 'replied');
    const finished = await waitForExecutions(
      t,
      key,
      workflow.id,
      (items) => items.length === 3 && items.every((x) => ['COMPLETED', 'EXITED'].includes(x.status)),
      30_000,
      'three finished executions',
    );

    // The two emails delivered; a person opens and clicks one, a link scanner loads the other's pixel.
    const messages = await sink.waitForMessages((all) => [answers, silent].every((to) => all.some((m) => m.envelope.to[0] === to)));
    const pathsOf = async (to: string) => {
      const html = String((await sink.parse(messages.find((m) => m.envelope.to[0] === to)!)).html);
      return [...html.matchAll(/"https:\/\/mail\.test(\/t\/[oc]\/[A-Za-z0-9_-]+)"/g)].map((m) => m[1]);
    };
    const [answersPaths, silentPaths] = [await pathsOf(answers), await pathsOf(silent)];
    await request(t.url)
      .get(answersPaths.find((p) => p.startsWith('/t/o/'))!)
      .set('User-Agent', BROWSER)
      .expect(200);
    await request(t.url)
      .get(answersPaths.find((p) => p.startsWith('/t/c/'))!)
      .set('User-Agent', BROWSER)
      .expect(302);
    await request(t.url)
      .get(silentPaths.find((p) => p.startsWith('/t/o/'))!)
      .set('User-Agent', SCANNER)
      .expect(200);
    await waitFor(
      async () => {
        const [{ n }] = await db.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM emails WHERE project_id = $1 AND workflow_execution_id IS NOT NULL AND status = 'SENT'`,
          [project.id],
        );
        return n === 2 ? true : null;
      },
      20_000,
      'both emails SENT',
    );

    const res = await request(t.url).get(`/workflows/${workflow.id}/stats`).set(bearer(key)).expect(200);
    const stats = res.body as MailWorkflowStats;
    const zero = { entered: 0, completed: 0, failed: 0, waiting: 0, emailsSent: 0, opened: 0, clicked: 0 };
    expect(stats).toEqual({
      executions: { RUNNING: 0, WAITING: 0, COMPLETED: 1, EXITED: 2, FAILED: 0, CANCELLED: 0 },
      steps: [
        { stepId: 'check', type: 'CONDITION', ...zero, entered: 3, completed: 3 },
        { stepId: 'mail', type: 'SEND_EMAIL', ...zero, entered: 2, completed: 2, emailsSent: 2, opened: 1, clicked: 1 },
        { stepId: 'wait', type: 'WAIT_FOR_EVENT', ...zero, entered: 2, completed: 2 },
        { stepId: 'replied', type: 'EXIT', ...zero, entered: 1, completed: 1 },
        { stepId: 'bye', type: 'EXIT', ...zero, entered: 1, completed: 1 },
        { stepId: 'unused', type: 'EXIT', ...zero },
      ],
    });

    // The same numbers from the executions API: statuses, and each step's visits in the histories.
    const executions = await listExecutions(t, key, workflow.id);
    expect(executions.map((x) => x.id).sort()).toEqual(finished.map((x) => x.id).sort());
    for (const status of Object.keys(stats.executions)) {
      expect({ status, n: stats.executions[status as 'RUNNING'] }).toEqual({
        status,
        n: executions.filter((x) => x.status === status).length,
      });
    }
    const visits = executions.flatMap((x) => x.steps);
    for (const step of stats.steps) {
      const mine = visits.filter((v) => v.stepId === step.stepId);
      expect({ step: step.stepId, entered: step.entered, completed: step.completed, failed: step.failed, waiting: step.waiting }).toEqual({
        step: step.stepId,
        entered: mine.length,
        completed: mine.filter((v) => v.status === 'COMPLETED' || v.status === 'SKIPPED').length,
        failed: mine.filter((v) => v.status === 'FAILED').length,
        waiting: mine.filter((v) => v.status === 'WAITING').length,
      });
    }
  });

  it("an unknown or another project's workflow is a 404", async () => {
    const workflow = await createWorkflow(t, key, { name: 'Mine', eventName: 'x', steps: [{ id: 'end', type: 'EXIT', config: {} }] });
    const other = await createProject(t, 'Other');
    expectMailError(
      await request(t.url).get(`/workflows/${workflow.id}/stats`).set(bearer(other.secretKey)),
      404,
      'NOT_FOUND',
      'workflow not found',
    );
    expectMailError(
      await request(t.url).get('/workflows/00000000-0000-4000-8000-000000000000/stats').set(bearer(key)),
      404,
      'NOT_FOUND',
      'workflow not found',
    );
  });
});
