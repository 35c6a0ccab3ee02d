import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { QueueService } from '@app/service-kit';
import { projectScope } from '../src/core/scope/project-scope.js';
import { EMAIL_QUEUE, MailEmailPriority } from '../src/modules/delivery/email-delivery.queue.js';
import { EngagementEventsService } from '../src/modules/engagement/engagement-events.service.js';
import { WORKFLOW_QUEUE } from '../src/modules/workflows/workflows.queue.js';
import { waitFor } from './support/delivery-fixtures.js';
import { bearer, createProject } from './support/mail-api-helpers.js';
import { DeliveryHarness } from './support/delivery-harness.js';
import type { MailTestApp } from './support/mail-test-app.js';
import type { SmtpSink } from './support/smtp-sink.js';
import {
  createProjectWithTemplate,
  createWorkflow,
  listExecutions,
  startWebhookReceiver,
  track,
  waitForExecution,
  waitForExecutions,
  type WebhookReceiver,
} from './support/workflow-test-kit.js';

const DOMAIN = 'flows.example.com';

const sign = (body: string, secret: string) => `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`;

/**
 * Workflow executions end to end: events tracked over HTTP start executions that a real worker (the
 * worker module, in process) runs against real Postgres, Redis, an SMTP sink and an HTTP receiver.
 */
describe('workflow executions (real Postgres, Redis, SMTP sink, webhook receiver)', () => {
  let h: DeliveryHarness;
  let t: MailTestApp;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let db: DataSource;
  let project: MailProjectCredentials;
  let key: string;
  let templateId: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    h = await DeliveryHarness.start({
      MAIL_WEBHOOK_RETRY_BASE_MS: '20',
      MAIL_WEBHOOK_TIMEOUT_MS: '400',
      MAIL_WORKFLOW_SWEEP_SECONDS: '3600',
    });
    ({ t, sink, db } = h);
    ({ project, key, templateId } = await createProjectWithTemplate(t, DOMAIN, {
      name: 'Welcome',
      subject: 'Hi {{name}}',
      body: '<p>Hello {{name}} <{{email}}>, plan {{data.plan}}, from {{event.source ?? nowhere}}</p>',
      from: `hello@${DOMAIN}`,
    }));
    await h.startWorker([WORKFLOW_QUEUE, EMAIL_QUEUE]);
  });
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  const contactData = async (email: string) =>
    (
      await db.query<{ data: Record<string, unknown> }[]>(`SELECT data FROM contacts WHERE project_id = $1 AND email = $2`, [
        project.id,
        email,
      ])
    )[0]?.data;

  it('an event starts an execution that sends, waits, branches and completes (or exits)', async () => {
    const workflow = await createWorkflow(t, key, {
      name: 'Onboarding',
      eventName: 'signed-up',
      enabled: true,
      steps: [
        { id: 'welcome', type: 'SEND_EMAIL', config: { templateId }, next: 'pause' },
        { id: 'pause', type: 'DELAY', config: { amount: 1, unit: 'seconds' }, next: 'branch' },
        {
          id: 'branch',
          type: 'CONDITION',
          config: { field: 'data.plan', operator: 'equals', value: 'pro' },
          onTrue: 'upgrade',
          onFalse: 'bye',
        },
        { id: 'upgrade', type: 'UPDATE_CONTACT', config: { data: { tier: 'gold' } } },
        { id: 'bye', type: 'EXIT', config: {} },
      ],
    });
    const alice = await track(t, key, 'alice@flows.test', 'signed-up', {
      name: 'Alice & co',
      plan: 'pro',
      source: { value: 'ad', persistent: false },
    });
    const bob = await track(t, key, 'bob@flows.test', 'signed-up', { name: 'Bob', plan: 'free' });

    const items = await waitForExecutions(
      t,
      key,
      workflow.id,
      (list) => list.length === 2 && list.every((e) => ['COMPLETED', 'EXITED'].includes(e.status)),
    );
    const byContact = new Map(items.map((e) => [e.contactId, e]));
    const step = (stepId: string) => ({ stepId, status: 'COMPLETED', startedAt: expect.any(String), completedAt: expect.any(String) });
    expect(byContact.get(alice.contact)).toMatchObject({
      workflowId: workflow.id,
      status: 'COMPLETED',
      currentStepId: null,
      completedAt: expect.any(String),
      steps: [step('welcome'), step('pause'), step('branch'), step('upgrade')],
    });
    expect(byContact.get(bob.contact)).toMatchObject({
      status: 'EXITED',
      steps: [step('welcome'), step('pause'), step('branch'), step('bye')],
    });
    // The DELAY held the execution for its second.
    const pause = byContact.get(alice.contact)!.steps[1];
    expect(Date.parse(pause.completedAt!) - Date.parse(pause.startedAt!)).toBeGreaterThanOrEqual(900);

    const messages = await sink.waitForMessages((all) => all.length >= 2);
    const parsed = await Promise.all(messages.map((m) => sink.parse(m)));
    // Values are HTML-escaped in the body, raw in the subject; the trigger event's data is {{event.*}}.
    const toAlice = parsed.find((m) => m.subject === 'Hi Alice & co');
    expect(toAlice?.html).toContain('Hello Alice &amp; co <alice@flows.test>, plan pro, from ad');
    expect(parsed.find((m) => m.subject === 'Hi Bob')?.html).toContain('plan free, from nowhere');
    // One email per SEND_EMAIL visit, tied to its execution.
    const rows = await db.query(
      `SELECT workflow_execution_id, workflow_step_seq, status FROM emails WHERE project_id = $1 AND workflow_execution_id IS NOT NULL`,
      [project.id],
    );
    expect(rows).toHaveLength(2);
    // Queued on the shared email queue behind transactional mail (the job id is the email id).
    const emailIds = (
      await db.query<{ id: string }[]>(`SELECT id FROM emails WHERE project_id = $1 AND workflow_execution_id IS NOT NULL`, [project.id])
    ).map((r) => r.id);
    const jobs = await Promise.all(emailIds.map((id) => t.app.get(QueueService).queue(EMAIL_QUEUE).getJob(id)));
    expect(jobs.map((job) => job?.opts.priority)).toEqual([MailEmailPriority.Workflow, MailEmailPriority.Workflow]);
    expect(await contactData('alice@flows.test')).toMatchObject({ plan: 'pro', tier: 'gold' });
    expect(await contactData('bob@flows.test')).not.toHaveProperty('tier');
  });

  it("CONDITION on the contact's events; a MARKETING email to an unsubscribed contact is SKIPPED; an unverified sender fails the step", async () => {
    const marketing = await request(t.url)
      .post('/templates')
      .set(bearer(key))
      .send({ name: 'News', subject: 'News', body: '<p>News</p>', from: `news@${DOMAIN}`, type: 'MARKETING' })
      .expect(201);
    const workflow = await createWorkflow(t, key, {
      name: 'Newsletter',
      eventName: 'go',
      enabled: true,
      steps: [
        { id: 'vip', type: 'CONDITION', config: { field: 'event.vip', operator: 'triggered' }, onTrue: 'optout', onFalse: 'mail' },
        { id: 'optout', type: 'UPDATE_CONTACT', config: { subscribed: false }, next: 'mail' },
        { id: 'mail', type: 'SEND_EMAIL', config: { templateId: marketing.body.id } },
      ],
    });
    await track(t, key, 'vip@flows.test', 'vip');
    const vip = await track(t, key, 'vip@flows.test', 'go');
    const plain = await track(t, key, 'plain@flows.test', 'go');
    const done = await waitForExecutions(t, key, workflow.id, (list) => list.length === 2 && list.every((e) => e.status === 'COMPLETED'));
    const stepsOf = (contact: string) =>
      done.find((e) => e.contactId === contact)!.steps.map(({ stepId, status, error }) => ({ stepId, status, error }));
    expect(stepsOf(vip.contact)).toEqual([
      { stepId: 'vip', status: 'COMPLETED', error: undefined },
      { stepId: 'optout', status: 'COMPLETED', error: undefined },
      { stepId: 'mail', status: 'SKIPPED', error: 'contact unsubscribed' },
    ]);
    expect(stepsOf(plain.contact).map((s) => `${s.stepId}:${s.status}`)).toEqual(['vip:COMPLETED', 'mail:COMPLETED']);
    await sink.waitForMessages((all) => all.some((m) => m.envelope.to.includes('plain@flows.test')));
    expect(sink.messages.filter((m) => m.envelope.to.includes('vip@flows.test'))).toEqual([]);
    // A marketing email: it carries the unsubscribe headers.
    const news = sink.messages.find((m) => m.envelope.to.includes('plain@flows.test'))!;
    expect(news.raw.toString('latin1')).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click/m);

    const elsewhere = await request(t.url)
      .post('/templates')
      .set(bearer(key))
      .send({ name: 'Elsewhere', subject: 'x', body: '<p>x</p>', from: 'someone@unverified.example' })
      .expect(201);
    const failing = await createWorkflow(t, key, {
      name: 'Unverified',
      eventName: 'go-elsewhere',
      enabled: true,
      steps: [{ id: 'mail', type: 'SEND_EMAIL', config: { templateId: elsewhere.body.id } }],
    });
    await track(t, key, 'plain@flows.test', 'go-elsewhere');
    const failed = await waitForExecution(t, key, failing.id, ['FAILED', 'COMPLETED']);
    expect(failed).toMatchObject({
      status: 'FAILED',
      currentStepId: 'mail',
      steps: [{ stepId: 'mail', status: 'FAILED', error: 'sender domain of someone@unverified.example is not verified' }],
    });
  });

  it('WAIT_FOR_EVENT resumes on the awaited event, and times out without it (an earlier event does not count)', async () => {
    const workflow = await createWorkflow(t, key, {
      name: 'Cart',
      eventName: 'cart-created',
      enabled: true,
      steps: [
        { id: 'wait', type: 'WAIT_FOR_EVENT', config: { eventName: 'purchased', timeoutSeconds: 3 }, next: 'thanks', onTimeout: 'remind' },
        { id: 'thanks', type: 'UPDATE_CONTACT', config: { data: { outcome: 'bought' } } },
        { id: 'remind', type: 'UPDATE_CONTACT', config: { data: { outcome: 'reminded' } } },
      ],
    });
    await track(t, key, 'erin@flows.test', 'purchased'); // before any wait: must not resume erin's
    const carol = await track(t, key, 'carol@flows.test', 'cart-created');
    const dave = await track(t, key, 'dave@flows.test', 'cart-created');
    const erin = await track(t, key, 'erin@flows.test', 'cart-created');
    await waitForExecutions(t, key, workflow.id, (list) => list.length === 3 && list.every((e) => e.status === 'WAITING'));
    await track(t, key, 'carol@flows.test', 'purchased');
    const resumed = await waitForExecutions(t, key, workflow.id, (list) =>
      list.some((e) => e.contactId === carol.contact && e.status === 'COMPLETED'),
    );
    // Resumed by the event, before the 3 s timeout of the others.
    expect(resumed.filter((e) => e.contactId !== carol.contact).every((e) => e.status === 'WAITING')).toBe(true);
    const done = await waitForExecutions(t, key, workflow.id, (list) => list.every((e) => e.status === 'COMPLETED'), 15_000);
    const stepsOf = (contact: string) => done.find((e) => e.contactId === contact)!.steps.map((s) => `${s.stepId}:${s.status}`);
    expect(stepsOf(carol.contact)).toEqual(['wait:COMPLETED', 'thanks:COMPLETED']);
    expect(stepsOf(dave.contact)).toEqual(['wait:COMPLETED', 'remind:COMPLETED']);
    expect(stepsOf(erin.contact)).toEqual(['wait:COMPLETED', 'remind:COMPLETED']);
    expect(await contactData('carol@flows.test')).toMatchObject({ outcome: 'bought' });
    expect(await contactData('dave@flows.test')).toMatchObject({ outcome: 'reminded' });
  });

  it('WEBHOOK: the receiver gets the default body signed with the workflow secret, or the configured body, method and headers', async () => {
    const plain = await createWorkflow(t, key, {
      name: 'Hook',
      eventName: 'paid',
      enabled: true,
      steps: [{ id: 'notify', type: 'WEBHOOK', config: { url: `${receiver.url}/paid` } }],
    });
    const custom = await createWorkflow(t, key, {
      name: 'Custom hook',
      eventName: 'paid',
      enabled: true,
      steps: [
        {
          id: 'put',
          type: 'WEBHOOK',
          config: { url: `${receiver.url}/custom?x=1`, method: 'put', headers: { 'X-Custom': 'yes' }, body: { hello: 'wörld' } },
        },
      ],
    });
    expect(plain.webhookSecret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(custom.webhookSecret).not.toBe(plain.webhookSecret);
    const before = receiver.requests.length;
    const frank = await track(t, key, 'frank@flows.test', 'paid', { amount: 5, plan: 'pro' });
    const [done] = await waitForExecutions(t, key, plain.id, (list) => list[0]?.status === 'COMPLETED');
    await waitForExecution(t, key, custom.id, ['COMPLETED']);

    const got = receiver.requests.slice(before);
    const paid = got.find((r) => r.url === '/paid')!;
    expect(paid.method).toBe('POST');
    expect(paid.headers['content-type']).toBe('application/json');
    expect(paid.headers['x-webhook-signature']).toBe(sign(paid.body, plain.webhookSecret));
    expect(paid.headers['x-webhook-signature']).not.toBe(sign(paid.body, custom.webhookSecret));
    expect(paid.headers['x-webhook-id']).toBe(`${done.id}.notify.1`);
    expect(JSON.parse(paid.body)).toEqual({
      event: { id: frank.event, name: 'paid', data: { amount: 5, plan: 'pro' }, timestamp: expect.stringMatching(/Z$/) },
      contact: { id: frank.contact, email: 'frank@flows.test', subscribed: true, data: { amount: 5, plan: 'pro' } },
      executionId: done.id,
      workflowId: plain.id,
    });
    const put = got.find((r) => r.url === '/custom?x=1')!;
    expect(put).toMatchObject({ method: 'PUT', body: '{"hello":"wörld"}' });
    expect(put.headers['x-custom']).toBe('yes');
    expect(put.headers['x-webhook-signature']).toBe(sign(put.body, custom.webhookSecret));
  });

  it('WEBHOOK retries with backoff and the same delivery id; after 5 failed attempts (5xx, redirect or timeout) the execution is FAILED', async () => {
    const hook = (eventName: string, path: string) =>
      createWorkflow(t, key, {
        name: eventName,
        eventName,
        enabled: true,
        steps: [{ id: 'hook', type: 'WEBHOOK', config: { url: `${receiver.url}${path}` } }],
      });
    const flaky = await hook('flaky', '/flaky');
    receiver.respondWith(500, 503);
    await track(t, key, 'gina@flows.test', 'flaky');
    const recovered = await waitForExecution(t, key, flaky.id, ['COMPLETED', 'FAILED']);
    expect(recovered).toMatchObject({ status: 'COMPLETED', steps: [{ stepId: 'hook', status: 'COMPLETED' }] });
    expect(recovered.steps[0]).not.toHaveProperty('error');
    const attempts = receiver.requests.filter((r) => r.url === '/flaky');
    expect(attempts.map((r) => r.headers['x-webhook-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(attempts.map((r) => r.headers['x-webhook-id'])).size).toBe(1);
    // Exponential from MAIL_WEBHOOK_RETRY_BASE_MS (20 ms here): the second retry waited longer than the first.
    expect(attempts[2].at - attempts[1].at).toBeGreaterThanOrEqual(40);

    for (const [name, statuses, error] of [
      ['down', [500, 500, 500, 500, 500], /webhook failed after 5 attempts: HTTP 500/],
      ['moved', [302, 302, 302, 302, 302], /webhook failed after 5 attempts: redirect \(302\) refused/],
    ] as const) {
      const workflow = await hook(name, `/${name}`);
      receiver.respondWith(...statuses);
      await track(t, key, `${name}@flows.test`, name);
      const failed = await waitForExecution(t, key, workflow.id, ['FAILED', 'COMPLETED']);
      expect(failed).toMatchObject({
        status: 'FAILED',
        currentStepId: 'hook',
        steps: [{ stepId: 'hook', status: 'FAILED', error: expect.stringMatching(error) }],
      });
      expect(receiver.requests.filter((r) => r.url === `/${name}`)).toHaveLength(5);
    }
    expect(receiver.requests.some((r) => r.url === '/elsewhere')).toBe(false);

    const slow = await hook('slow', '/slow');
    receiver.holdNext(1500, 5);
    await track(t, key, 'slow@flows.test', 'slow');
    const timedOut = await waitForExecution(t, key, slow.id, ['FAILED', 'COMPLETED'], 20_000);
    expect(timedOut.steps[0]).toMatchObject({
      status: 'FAILED',
      error: expect.stringMatching(/after 5 attempts: request failed: timed out after 400 ms/),
    });
  });

  it('re-entry: without allowReentry a contact runs a workflow once, even for events in one batch; with it, once per event; disabled workflows start nothing', async () => {
    const steps = [{ id: 'mark', type: 'UPDATE_CONTACT', config: { data: { seen: true } } }];
    const once = await createWorkflow(t, key, { name: 'once', eventName: 'visited', enabled: true, steps });
    const again = await createWorkflow(t, key, { name: 'again', eventName: 'visited', enabled: true, allowReentry: true, steps });
    const off = await createWorkflow(t, key, { name: 'off', eventName: 'visited', steps });
    expect(off.enabled).toBe(false);

    await track(t, key, 'henry@flows.test', 'visited');
    await waitForExecutions(t, key, again.id, (list) => list.length === 1 && list[0].status === 'COMPLETED');
    await track(t, key, 'henry@flows.test', 'visited');
    // Five at once: they are written together (one track batch), and start at most one `once` execution.
    await Promise.all(Array.from({ length: 5 }, () => track(t, key, 'ivy@flows.test', 'visited')));
    await waitForExecutions(t, key, again.id, (list) => list.length === 7 && list.every((e) => e.status === 'COMPLETED'));
    const onceRuns = await listExecutions(t, key, once.id);
    expect(onceRuns.map((e) => e.contactId).sort()).toHaveLength(2);
    expect(new Set(onceRuns.map((e) => e.contactId)).size).toBe(2);
    expect(await listExecutions(t, key, off.id)).toEqual([]);

    // Enabling starts executions from then on; disabling again stops them.
    await request(t.url).patch(`/workflows/${off.id}`).set(bearer(key)).send({ enabled: true }).expect(200);
    await track(t, key, 'henry@flows.test', 'visited');
    await waitForExecutions(t, key, off.id, (list) => list.length === 1 && list[0].status === 'COMPLETED');
    await request(t.url).patch(`/workflows/${off.id}`).set(bearer(key)).send({ enabled: false }).expect(200);
    await track(t, key, 'jack@flows.test', 'visited');
    await waitForExecutions(t, key, again.id, (list) => list.length === 9 && list.every((e) => e.status === 'COMPLETED'));
    expect(await listExecutions(t, key, off.id)).toHaveLength(1);
    expect(await listExecutions(t, key, once.id)).toHaveLength(3);
  });

  it('disabling stops new executions but lets running ones finish; deleting cancels the running ones and no step runs after', async () => {
    const workflow = await createWorkflow(t, key, {
      name: 'Slow drip',
      eventName: 'drip',
      enabled: true,
      steps: [
        { id: 'hold', type: 'DELAY', config: { amount: 1, unit: 'seconds' }, next: 'send' },
        { id: 'send', type: 'SEND_EMAIL', config: { templateId } },
      ],
    });
    await track(t, key, 'kim@flows.test', 'drip', { name: 'Kim' });
    await waitForExecution(t, key, workflow.id, ['WAITING']);
    await request(t.url).patch(`/workflows/${workflow.id}`).set(bearer(key)).send({ enabled: false }).expect(200);
    await track(t, key, 'lee@flows.test', 'drip');
    const finished = await waitForExecution(t, key, workflow.id, ['COMPLETED']);
    expect(finished.steps.map((s) => s.stepId)).toEqual(['hold', 'send']);
    expect(await listExecutions(t, key, workflow.id)).toHaveLength(1);

    const long = await createWorkflow(t, key, {
      name: 'Long drip',
      eventName: 'long-drip',
      enabled: true,
      steps: [
        { id: 'hold', type: 'DELAY', config: { amount: 2, unit: 'seconds' }, next: 'send' },
        { id: 'send', type: 'SEND_EMAIL', config: { templateId } },
      ],
    });
    const mia = await track(t, key, 'mia@flows.test', 'long-drip', { name: 'Mia' });
    const waiting = await waitForExecution(t, key, long.id, ['WAITING']);
    await request(t.url).delete(`/workflows/${long.id}`).set(bearer(key)).expect(204);
    await request(t.url).get(`/workflows/${long.id}`).set(bearer(key)).expect(404);
    await request(t.url).get(`/workflows/${long.id}/executions`).set(bearer(key)).expect(404);
    const state = async () =>
      db.query<{ status: string; steps: string[] }[]>(
        `SELECT x.status, array_agg(s.step_id || ':' || s.status ORDER BY s.seq) AS steps
           FROM workflow_executions x JOIN workflow_execution_steps s ON s.execution_id = x.id WHERE x.id = $1 GROUP BY x.status`,
        [waiting.id],
      );
    expect(await state()).toEqual([{ status: 'CANCELLED', steps: ['hold:CANCELLED'] }]);
    // The DELAY's timer fires after the deletion: nothing runs. Positive signal first: no job of this
    // execution is left waiting, delayed or active (its timer fired and the job ran), then the absence.
    const queue = t.app.get(QueueService).queue(WORKFLOW_QUEUE);
    const pendingJobs = async () =>
      (await queue.getJobs(['delayed', 'waiting', 'active', 'prioritized'])).filter(
        (job) => (job?.data as { executionId?: string } | undefined)?.executionId === waiting.id,
      );
    await waitFor(async () => ((await pendingJobs()).length === 0 ? true : null), 15_000, "the DELAY's job to have run");
    expect(await state()).toEqual([{ status: 'CANCELLED', steps: ['hold:CANCELLED'] }]);
    const mails = await db.query(`SELECT id FROM emails WHERE contact_id = $1`, [mia.contact]);
    expect(mails).toEqual([]);
  });

  it('GET /workflows/{id}/executions pages newest first, filters by status, and is a 404 for other projects', async () => {
    const workflow = await createWorkflow(t, key, {
      name: 'Exit',
      eventName: 'bounce-in',
      enabled: true,
      steps: [{ id: 'out', type: 'EXIT', config: {} }],
    });
    for (const name of ['n1', 'n2', 'n3']) await track(t, key, `${name}@flows.test`, 'bounce-in');
    await waitForExecutions(t, key, workflow.id, (list) => list.length === 3 && list.every((e) => e.status === 'EXITED'));
    const first = await request(t.url).get(`/workflows/${workflow.id}/executions?limit=2`).set(bearer(key)).expect(200);
    expect(first.body).toMatchObject({ hasMore: true, total: 3, nextCursor: expect.any(String) });
    expect(first.body.items).toHaveLength(2);
    const second = await request(t.url)
      .get(`/workflows/${workflow.id}/executions?limit=2&cursor=${first.body.nextCursor}`)
      .set(bearer(key))
      .expect(200);
    expect(second.body).toMatchObject({ hasMore: false, total: 3, nextCursor: null });
    const ids = [...first.body.items, ...second.body.items].map((e: { id: string }) => e.id);
    expect(ids).toEqual([...ids].sort().reverse());
    expect(new Set(ids).size).toBe(3);
    const exited = await request(t.url).get(`/workflows/${workflow.id}/executions?status=EXITED`).set(bearer(key)).expect(200);
    expect(exited.body.total).toBe(3);
    const running = await request(t.url).get(`/workflows/${workflow.id}/executions?status=RUNNING`).set(bearer(key)).expect(200);
    expect(running.body).toEqual({ items: [], nextCursor: null, hasMore: false, total: 0 });
    const bad = await request(t.url).get(`/workflows/${workflow.id}/executions?status=DONE&limit=0`).set(bearer(key));
    expect(bad.status).toBe(422);
    expect(bad.body.error.errors.map((e: { field: string }) => e.field).sort()).toEqual(['limit', 'status']);

    const other = await createProject(t, 'Other');
    await request(t.url).get(`/workflows/${workflow.id}/executions`).set(bearer(other.secretKey)).expect(404);
    // The other project's identical event name starts nothing here, and nothing of ours there. Positive
    // signal first: the other project's own workflow on that event ran for it, then ours has no more.
    const theirs = await createWorkflow(t, other.secretKey, {
      name: 'Exit',
      eventName: 'bounce-in',
      enabled: true,
      steps: [{ id: 'out', type: 'EXIT', config: {} }],
    });
    await track(t, other.secretKey, 'n1@flows.test', 'bounce-in');
    await waitForExecutions(t, other.secretKey, theirs.id, (list) => list.length === 1 && list[0].status === 'EXITED');
    expect(await listExecutions(t, key, workflow.id)).toHaveLength(3);
  });

  it("the service's own email.* events (recorded by EngagementEventsService, in a transaction) start workflows too", async () => {
    const workflow = await createWorkflow(t, key, {
      name: 'Opened',
      eventName: 'email.opened',
      enabled: true,
      allowReentry: true,
      steps: [{ id: 'tag', type: 'UPDATE_CONTACT', config: { data: { engaged: true } } }],
    });
    const { contact } = await track(t, key, 'olga@flows.test', 'visited-pricing');
    const events = t.app.get(EngagementEventsService);
    await db.transaction((tx) =>
      events.record(tx, projectScope(project.id), [{ contactId: contact, name: 'email.opened', data: { emailId: 'x' } }]),
    );
    const done = await waitForExecution(t, key, workflow.id, ['COMPLETED']);
    expect(done.contactId).toBe(contact);
    expect(await contactData('olga@flows.test')).toMatchObject({ engaged: true });
    // A rolled-back recording starts nothing.
    await db
      .transaction(async (tx) => {
        await events.record(tx, projectScope(project.id), [{ contactId: contact, name: 'email.opened', data: {} }]);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    const other = await track(t, key, 'pia@flows.test', 'visited-pricing');
    await events.record(db, projectScope(project.id), [{ contactId: other.contact, name: 'email.opened', data: {} }]);
    const all = await waitForExecutions(t, key, workflow.id, (list) => list.length >= 2 && list.every((e) => e.status === 'COMPLETED'));
    expect(all.map((e) => e.contactId).sort()).toEqual([contact, other.contact].sort());
  });
});
