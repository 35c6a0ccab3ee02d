import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { QueueService } from '@app/service-kit';
import type { MailConfig } from '../src/config/mail-config.js';
import { projectScope } from '../src/core/scope/project-scope.js';
import { CampaignPipeline } from '../src/modules/campaigns/campaign-pipeline.service.js';
import { CampaignSweep } from '../src/modules/campaigns/campaign-sweep.service.js';
import type { MailCampaign, MailCampaignStats } from '../src/modules/campaigns/campaigns.dto.js';
import { CAMPAIGN_QUEUE } from '../src/modules/campaigns/campaigns.queue.js';
import { CampaignsRepository } from '../src/modules/campaigns/campaigns.repository.js';
import { EMAIL_QUEUE } from '../src/modules/delivery/email-delivery.queue.js';
import { MarketingFeeder } from '../src/modules/delivery/marketing-feeder.js';
import { insertVerifiedDomain, waitFor, waitForQueuesDrained } from './support/delivery-fixtures.js';
import { bearer, createProject } from './support/mail-api-helpers.js';
import { DeliveryHarness } from './support/delivery-harness.js';
import type { MailTestApp } from './support/mail-test-app.js';
import type { SinkMessage, SmtpSink } from './support/smtp-sink.js';

const DOMAIN = 'campaigns.example.com';

/** A header of the message as sent (folded lines joined), or null. */
function rawHeader(message: SinkMessage, name: string): string | null {
  const head = message.raw.subarray(0, message.raw.indexOf('\r\n\r\n')).toString('latin1');
  const match = new RegExp(`^${name}:[ \\t]*(.*(?:\\r\\n[ \\t].*)*)`, 'im').exec(head);
  return match ? match[1].replace(/\r\n[ \t]+/g, '').trim() : null;
}
const PUBLIC_URL = 'https://mail.test';

/**
 * The staged send pipeline end to end, with the worker in process (the campaign and email queues):
 * audiences and snapshot, per-contact rendering, marketing headers, exactly-once per recipient, cancel,
 * schedule, transactional priority, test sends and stats against what the SMTP sink received. Worker
 * processes (SIGKILL, Redis FLUSHALL) are in campaigns-workers.spec.ts.
 */
describe('campaign send pipeline (real Postgres, Redis, SMTP sink)', () => {
  let h: DeliveryHarness;
  let t: MailTestApp;
  let sink: SmtpSink;
  let db: DataSource;

  beforeAll(async () => {
    h = await DeliveryHarness.start({ MAIL_PUBLIC_URL: PUBLIC_URL });
    ({ t, sink, db } = h);
  });
  afterEach(() => h.stopWorker());
  afterAll(() => h?.close());

  const startWorker = (overrides: Partial<MailConfig> = {}) => h.startWorker([EMAIL_QUEUE, CAMPAIGN_QUEUE], overrides);

  interface Fixture {
    p: MailProjectCredentials;
    auth: Record<string, string>;
    /** Recipients' addresses end with it: the sink's messages of this test. */
    suffix: string;
  }

  async function project(name: string): Promise<Fixture> {
    const p = await createProject(t, name);
    await insertVerifiedDomain(db, p.id, DOMAIN);
    return { p, auth: bearer(p.secretKey), suffix: `@${p.id.slice(0, 8)}.example.net` };
  }

  /** `count` contacts `<prefix><i><suffix>` in one statement, with `data` (`{{i}}` replaced by the index). */
  async function contacts(f: Fixture, prefix: string, count: number, options: { subscribed?: boolean; data?: object } = {}): Promise<void> {
    await db.query(
      `INSERT INTO contacts (project_id, email, subscribed, data)
       SELECT $1, $2 || i || $3, $4, replace($5, '{{i}}', i::text)::jsonb FROM generate_series(1, $6) AS i`,
      [f.p.id, prefix, f.suffix, options.subscribed ?? true, JSON.stringify(options.data ?? {}), count],
    );
  }

  async function campaign(f: Fixture, body: object = {}): Promise<MailCampaign> {
    const res = await request(t.url)
      .post('/campaigns')
      .set(f.auth)
      .send({
        name: 'News',
        subject: 'Hi {{ firstName ?? there }}',
        body: '<p>Hello {{email}}</p>',
        from: `news@${DOMAIN}`,
        audienceType: 'ALL',
        ...body,
      });
    if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
    return res.body.data as MailCampaign;
  }

  const send = (f: Fixture, id: string, body: object = {}) => request(t.url).post(`/campaigns/${id}/send`).set(f.auth).send(body);
  const get = async (f: Fixture, id: string): Promise<MailCampaign> =>
    (await request(t.url).get(`/campaigns/${id}`).set(f.auth).expect(200)).body.data as MailCampaign;
  const stats = async (f: Fixture, id: string): Promise<MailCampaignStats> =>
    (await request(t.url).get(`/campaigns/${id}/stats`).set(f.auth).expect(200)).body.data as MailCampaignStats;
  const received = (f: Fixture): SinkMessage[] => sink.messages.filter((m) => m.envelope.to.some((to) => to.endsWith(f.suffix)));
  const waitForStatus = (f: Fixture, id: string, status: string, timeoutMs = 30_000) =>
    waitFor(async () => ((await get(f, id)).status === status ? true : null), timeoutMs, `campaign ${status}`);
  const addressesOf = (messages: SinkMessage[]) => messages.map((m) => m.envelope.to[0]).sort();

  it('a campaign to a segment reaches exactly its subscribed members, once each, rendered for each with marketing headers', async () => {
    await startWorker({ ratePerSecond: 200 });
    const f = await project('Segment campaign');
    await contacts(f, 'pro', 25, { data: { plan: 'pro', firstName: 'Pro{{i}}' } });
    await contacts(f, 'pro-unsub', 5, { subscribed: false, data: { plan: 'pro' } });
    await contacts(f, 'free', 10, { data: { plan: 'free' } });
    const segment = await request(t.url)
      .post('/segments')
      .set(f.auth)
      .send({
        name: 'Pro',
        type: 'DYNAMIC',
        condition: { logic: 'AND', groups: [{ filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] }] },
      })
      .expect(201);
    const c = await campaign(f, {
      audienceType: 'SEGMENT',
      segmentId: segment.body.id,
      subject: 'Hi {{firstName}} ({{data.plan}})',
      body: '<p>Dear {{ firstName }}, plan {{plan}}.</p><a href="https://shop.example/p?a=1&amp;b=2">Shop</a> <a href="{{unsubscribeUrl}}">Unsubscribe</a>',
    });
    const sent = await send(f, c.id).expect(200);
    expect(sent.body.data.status).toBe('SENDING');
    await waitForStatus(f, c.id, 'SENT');

    const messages = received(f);
    expect(addressesOf(messages)).toEqual(Array.from({ length: 25 }, (_, i) => `pro${i + 1}${f.suffix}`).sort());
    const message = messages.find((m) => m.envelope.to[0] === `pro7${f.suffix}`)!;
    const parsed = await sink.parse(message);
    expect(parsed.subject).toBe('Hi Pro7 (pro)');
    expect(parsed.html).toContain('<p>Dear Pro7, plan pro.</p>');
    const unsubscribe = rawHeader(message, 'List-Unsubscribe')!;
    expect(unsubscribe).toMatch(new RegExp(`^<${PUBLIC_URL}/unsubscribe/[A-Za-z0-9_-]+>$`));
    expect(rawHeader(message, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    // The unsubscribe link in the body is the contact's own, untouched by click tracking; other links are.
    expect(parsed.html).toContain(`href="${unsubscribe.slice(1, -1)}"`);
    expect(parsed.html).not.toContain('https://shop.example');
    expect(parsed.html).toMatch(new RegExp(`href="${PUBLIC_URL}/t/c/[A-Za-z0-9_-]+"`));
    expect(parsed.html).toMatch(new RegExp(`<img src="${PUBLIC_URL}/t/o/[A-Za-z0-9_-]+"`));
    expect(parsed.text).toContain('https://shop.example/p?a=1&b=2');

    const after = await get(f, c.id);
    expect(after).toMatchObject({ status: 'SENT', totalRecipients: 25, sentAt: expect.any(String) });
    expect(await stats(f, c.id)).toMatchObject({ totalRecipients: 25, sentCount: 25, deliveredCount: 25, bouncedCount: 0 });
    const events = await db.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM events WHERE project_id = $1 AND name = 'email.sent'`, [
      f.p.id,
    ]);
    expect(events[0].n).toBe(25);
    // The pipeline run again (a duplicate dispatch and batch) sends nothing twice.
    const pipeline = h.worker!.get(CampaignPipeline);
    expect(await pipeline.dispatch(projectScope(f.p.id), c.id)).toEqual({ outcome: 'skipped', reason: 'campaign is SENT' });
    expect(await pipeline.planBatch(projectScope(f.p.id), c.id, 0)).toEqual({ outcome: 'skipped', reason: 'campaign is SENT' });
    expect(received(f)).toHaveLength(25);
  });

  it('FILTERED and ALL audiences: subscribed contacts only; contacts added after the start are not in the snapshot', async () => {
    await startWorker({ ratePerSecond: 200 });
    const f = await project('Filtered');
    await contacts(f, 'de', 6, { data: { country: 'DE' } });
    await contacts(f, 'fr', 4, { data: { country: 'FR' } });
    await contacts(f, 'gone', 3, { subscribed: false, data: { country: 'DE' } });
    const filtered = await campaign(f, {
      audienceType: 'FILTERED',
      audienceFilter: { logic: 'AND', groups: [{ filters: [{ field: 'data.country', operator: 'equals', value: 'DE' }] }] },
    });
    await send(f, filtered.id).expect(200);
    await waitForStatus(f, filtered.id, 'SENT');
    expect(addressesOf(received(f))).toEqual(Array.from({ length: 6 }, (_, i) => `de${i + 1}${f.suffix}`).sort());

    const all = await campaign(f);
    await send(f, all.id).expect(200);
    await waitFor(async () => ((await get(f, all.id)).totalRecipients > 0 ? true : null), 10_000, 'the snapshot');
    await contacts(f, 'late', 2);
    await waitForStatus(f, all.id, 'SENT');
    expect((await get(f, all.id)).totalRecipients).toBe(10);
    expect(received(f)).toHaveLength(16);
    expect(received(f).filter((m) => m.envelope.to[0].startsWith('late'))).toEqual([]);
  });

  it('an empty audience ends SENT at once with nothing sent', async () => {
    await startWorker();
    const f = await project('Empty');
    await contacts(f, 'unsub', 3, { subscribed: false });
    const c = await campaign(f);
    await send(f, c.id).expect(200);
    await waitForStatus(f, c.id, 'SENT');
    expect(await stats(f, c.id)).toMatchObject({ totalRecipients: 0, sentCount: 0 });
    expect(received(f)).toEqual([]);
  });

  it('a contact that unsubscribes or is deleted after the snapshot gets nothing', async () => {
    // A low rate keeps most emails queued while the contacts change.
    await startWorker({ ratePerSecond: 4 });
    const f = await project('Unsubscribe mid-send');
    await contacts(f, 'c', 12);
    const c = await campaign(f);
    await send(f, c.id).expect(200);
    await waitFor(async () => ((await get(f, c.id)).totalRecipients === 12 ? true : null), 10_000, 'the snapshot');
    await db.query(`UPDATE contacts SET subscribed = false WHERE project_id = $1 AND email = $2`, [f.p.id, `c11${f.suffix}`]);
    await db.query(`DELETE FROM contacts WHERE project_id = $1 AND email = $2`, [f.p.id, `c12${f.suffix}`]);
    await waitForStatus(f, c.id, 'SENT');
    const addresses = addressesOf(received(f));
    expect(addresses).toHaveLength(10);
    expect(addresses).not.toContain(`c11${f.suffix}`);
    expect(addresses).not.toContain(`c12${f.suffix}`);
  });

  it('cancel mid-send stops at once: queued emails become CANCELLED and never go out; unplanned batches do nothing', async () => {
    await startWorker({ ratePerSecond: 5 });
    const f = await project('Cancel');
    // 2,600 recipients in 6 batches: at 5/s the backlog window (2,000 emails) holds batches 0-3; 4 and 5 wait.
    await contacts(f, 'c', 2600);
    const c = await campaign(f);
    await send(f, c.id).expect(200);
    await sink.waitForMessages(() => received(f).length >= 3, 20_000);
    const cancelled = await request(t.url).post(`/campaigns/${c.id}/cancel`).set(f.auth).expect(200);
    expect(cancelled.body.data.status).toBe('CANCELLED');
    const rows = await db.query<{ status: string; n: number }[]>(
      `SELECT status, count(*)::int AS n FROM emails WHERE campaign_id = $1 GROUP BY status`,
      [c.id],
    );
    const byStatus = Object.fromEntries(rows.map((r) => [r.status, r.n]));
    // The cancel also marks the rows being sent right now CANCELLED (markSent records SENT if the relay
    // accepts): those are the claimed ones (attempts > 0), the only ones that may still land.
    const [{ inFlight }] = await db.query<{ inFlight: number }[]>(
      `SELECT count(*)::int AS "inFlight" FROM emails WHERE campaign_id = $1 AND status = 'CANCELLED' AND attempts > 0`,
      [c.id],
    );
    // Read after the rows: a send finishing in between is then counted both in flight and received.
    const atCancel = received(f).length;
    expect(byStatus.QUEUED).toBeUndefined();
    expect(byStatus.CANCELLED).toBeGreaterThan(1900);
    // Nothing more arrives (what was in flight at the cancel may still land, then nothing). Positive
    // signal first: no email of the campaign is SENDING and the email queue is drained (every job of a
    // cancelled email ran and skipped it), so nothing is left that could send; then the absence.
    const emailQueue = t.app.get(QueueService).queue(EMAIL_QUEUE);
    await waitFor(
      async () => {
        const [{ n }] = await db.query<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM emails WHERE campaign_id = $1 AND status = 'SENDING'`,
          [c.id],
        );
        const counts = await emailQueue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
        return n === 0 && Object.values(counts).every((k) => k === 0) ? true : null;
      },
      30_000,
      'no send in flight and the email queue drained',
    );
    const settled = received(f).length;
    expect(settled - atCancel).toBeLessThanOrEqual(inFlight);
    const sentRows = await db.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM emails WHERE campaign_id = $1 AND status = 'SENT'`, [
      c.id,
    ]);
    expect(sentRows[0].n).toBe(settled);
    // The batches that were waiting for room plan nothing now.
    expect(await h.worker!.get(CampaignPipeline).planBatch(projectScope(f.p.id), c.id, 4)).toEqual({
      outcome: 'skipped',
      reason: 'campaign is CANCELLED',
    });
    const pending = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM campaign_recipients WHERE campaign_id = $1 AND status = 'PENDING'`,
      [c.id],
    );
    expect(pending[0].n).toBe(600);
    expect((await get(f, c.id)).status).toBe('CANCELLED');
  }, 60_000);

  it('a scheduled campaign fires after its time, not before', async () => {
    await startWorker({ ratePerSecond: 200 });
    const f = await project('Scheduled');
    await contacts(f, 's', 5);
    const c = await campaign(f);
    const at = new Date(Date.now() + 2500);
    const res = await send(f, c.id, { scheduledFor: at.toISOString() }).expect(200);
    expect(res.body.data).toMatchObject({ status: 'SCHEDULED', scheduledAt: at.toISOString() });
    // Armed, not fired: its dispatch waits in Redis as a delayed job (whether it fires early is what
    // the receivedAt check below proves, not a sleep).
    expect(await t.app.get(QueueService).queue(CAMPAIGN_QUEUE).getDelayedCount()).toBeGreaterThanOrEqual(1);
    expect((await get(f, c.id)).status).toBe('SCHEDULED');
    expect(received(f)).toEqual([]);
    await waitForStatus(f, c.id, 'SENT', 20_000);
    const times = received(f).map((m) => m.receivedAt);
    expect(times).toHaveLength(5);
    expect(Math.min(...times)).toBeGreaterThanOrEqual(at.getTime());
    expect(new Date((await get(f, c.id)).sentAt!).getTime()).toBeGreaterThanOrEqual(at.getTime());
  });

  it('transactional mail overtakes a running campaign', async () => {
    await startWorker({ ratePerSecond: 10 });
    const f = await project('Priority');
    await contacts(f, 'c', 40);
    const c = await campaign(f);
    await send(f, c.id).expect(200);
    await sink.waitForMessages(() => received(f).length >= 3, 20_000);
    await request(t.url)
      .post('/v1/send')
      .set(f.auth)
      .send({ to: `urgent${f.suffix}`, from: `alerts@${DOMAIN}`, subject: 'Reset', body: '<p>code</p>' })
      .expect(200);
    await waitForStatus(f, c.id, 'SENT', 30_000);
    const order = received(f).map((m) => m.envelope.to[0]);
    const at = order.indexOf(`urgent${f.suffix}`);
    expect(at).toBeGreaterThanOrEqual(3);
    // Queued behind more than 30 campaign emails, it went out within a few slots.
    expect(order.length - 1 - at).toBeGreaterThan(25);
  }, 60_000);

  it('dispatch jobs lost from Redis (send now and scheduled) are rebuilt by the sweep, each recipient once', async () => {
    const f = await project('Sweep');
    await contacts(f, 'c', 30);
    const now = await campaign(f);
    const later = await campaign(f);
    await send(f, now.id).expect(200);
    const at = new Date(Date.now() + 1500);
    await send(f, later.id, { scheduledFor: at.toISOString() }).expect(200);
    // Redis loses the campaign queue before any worker ran it.
    await t.app.get(QueueService).queue(CAMPAIGN_QUEUE).obliterate({ force: true });
    await startWorker({ ratePerSecond: 200 });
    // The worker consumes both queues and has nothing left to run (no sweep here): then nothing was planned.
    const queues = t.app.get(QueueService);
    await waitForQueuesDrained([queues.queue(CAMPAIGN_QUEUE), queues.queue(EMAIL_QUEUE)]);
    expect(await get(f, now.id)).toMatchObject({ status: 'SENDING', totalRecipients: 0 });
    const sweep = h.worker!.get(CampaignSweep);
    expect(await sweep.run()).toMatchObject({ dispatches: 2 });
    await waitForStatus(f, now.id, 'SENT');
    // The scheduled one got its delayed dispatch back: it fires at its time.
    await waitForStatus(f, later.id, 'SENT');
    expect(new Date((await get(f, later.id)).sentAt!).getTime()).toBeGreaterThanOrEqual(at.getTime());
    expect(received(f)).toHaveLength(60);
    expect(new Set(addressesOf(received(f))).size).toBe(30);
    // A finished campaign is not swept again; a sweep over nothing to do changes nothing.
    const again = await sweep.run();
    expect(again).toMatchObject({ batches: 0, emails: 0 });
    expect(received(f)).toHaveLength(60);
  });

  it('delivery jobs lost mid-send are rebuilt by the sweep; each recipient once', async () => {
    const f = await project('Lost deliveries');
    await contacts(f, 'c', 30);
    const c = await campaign(f);
    await startWorker({ ratePerSecond: 10 });
    await send(f, c.id).expect(200);
    await sink.waitForMessages(() => received(f).length >= 5, 20_000);
    await h.stopWorker();
    const queues = t.app.get(QueueService);
    await queues.queue(EMAIL_QUEUE).obliterate({ force: true });
    await queues.queue(CAMPAIGN_QUEUE).obliterate({ force: true });
    const left = received(f).length;
    expect(left).toBeLessThan(30);
    await startWorker({ ratePerSecond: 200 });
    // Positive signals first: the feeder has fed what was never fed (a feed finds nothing more) and the
    // worker has no job left to run. The emails fed before the loss are still unsent: only the sweep
    // brings their jobs back.
    const feeder = h.worker!.get(MarketingFeeder);
    await waitFor(async () => ((await feeder.feed()) === 0 ? true : null), 20_000, 'a feed with nothing left to feed');
    await waitForQueuesDrained([queues.queue(CAMPAIGN_QUEUE), queues.queue(EMAIL_QUEUE)]);
    const [stranded] = await db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM emails WHERE campaign_id = $1 AND status = 'QUEUED' AND fed_at IS NOT NULL`,
      [c.id],
    );
    expect(stranded.n).toBeGreaterThan(0);
    expect(received(f).length + stranded.n).toBeLessThanOrEqual(30);
    expect((await get(f, c.id)).status).toBe('SENDING');
    expect((await h.worker!.get(CampaignSweep).run()).emails).toBeGreaterThan(0);
    await waitForStatus(f, c.id, 'SENT');
    expect(received(f)).toHaveLength(30);
    expect(new Set(addressesOf(received(f))).size).toBe(30);
  });

  it('POST /test sends one email now, subject prefixed [TEST], with empty data; no contact, no campaign change', async () => {
    await startWorker();
    const f = await project('Test send');
    const c = await campaign(f, {
      subject: 'Hi {{ firstName ?? there }}',
      body: '<p>{{email}} {{plan}} <a href="{{unsubscribeUrl}}">u</a></p>',
    });
    const res = await request(t.url)
      .post(`/campaigns/${c.id}/test`)
      .set(f.auth)
      .send({ email: `tester${f.suffix}` })
      .expect(200);
    expect(res.body).toEqual({
      success: true,
      data: { email: expect.any(String), to: `tester${f.suffix}`, timestamp: expect.any(String) },
    });
    await sink.waitForMessages(() => received(f).length === 1, 10_000);
    const parsed = await sink.parse(received(f)[0]);
    expect(parsed.subject).toBe('[TEST] Hi there');
    expect(parsed.html).toBe(`<p>tester${f.suffix}  <a href="#">u</a></p>`);
    expect(rawHeader(received(f)[0], 'List-Unsubscribe')).toBeNull();
    expect(await get(f, c.id)).toEqual(c);
    const contactsOf = await db.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM contacts WHERE project_id = $1`, [f.p.id]);
    expect(contactsOf[0].n).toBe(0);
    expect(await stats(f, c.id)).toMatchObject({ sentCount: 0 });
    expect((await request(t.url).post(`/campaigns/${c.id}/test`).set(f.auth).send({ email: 'nope' })).status).toBe(422);
  });

  it('delivery completes campaigns through the same CampaignsRepository as the pipeline (one instance per process)', async () => {
    const w = await startWorker();
    expect(w.get(CampaignsRepository, { strict: false, each: true })).toHaveLength(1);
    expect(t.app.get(CampaignsRepository, { strict: false, each: true })).toHaveLength(1);
  });
});
