import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { QueueService } from '@app/service-kit';
import { findSamples, parsePrometheusText, queueBoardProblem, sampleValue, swaggerUiOperations } from '@app/service-kit/testing';
import { chromiumForSuite } from '@app/service-kit/testing/jest';
import { insertContact, insertEmails } from './support/delivery-fixtures.js';
import { bearer, createProject, expectMailError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

const ADMIN_TOKEN = `ops-${randomBytes(16).toString('hex')}`;
const basic = (password: string) => `Basic ${Buffer.from(`operator:${password}`).toString('base64')}`;

async function scrape(t: MailTestApp) {
  const res = await request(t.url).get('/metrics').expect(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return { text: res.text, samples: parsePrometheusText(res.text) };
}

/**
 * `GET /metrics` (Prometheus text) and the queue dashboard at `/admin/queues` behind MAIL_ADMIN_TOKEN,
 * on the real app over real Postgres and Redis; the dashboard and Swagger UI rendered in Chromium.
 */
describe('mail-api operations: metrics and the queue dashboard', () => {
  let t: MailTestApp;
  let db: DataSource;
  let secretKey: string;
  let campaignId: string;
  const queuedIds: string[] = [];

  beforeAll(async () => {
    t = await startMailApp({ env: { MAIL_ADMIN_TOKEN: ADMIN_TOKEN } });
    db = t.app.get(DataSource);
    const project = await createProject(t);
    secretKey = project.secretKey;
    // Written before the first scrape: the gauges are cached for 15 s, the queue list for 30 s.
    queuedIds.push(...(await insertEmails(db, project.id, [{}, {}, {}])));
    const [sent] = await insertEmails(db, project.id, [{}]);
    await db.query(`UPDATE emails SET status = 'SENT', sent_at = now() WHERE id = $1`, [sent]);
    campaignId = await insertSendingCampaign(db, project.id);
    const queues = t.app.get(QueueService);
    // A job waiting for a minute (BullMQ keeps the given creation time), and one of the other app's queues.
    await queues.add('mail-ops-probe', 'probe', {}, { timestamp: Date.now() - 60_000 });
    await queues.add('platform-ops-probe', 'probe', {});
  });
  afterAll(async () => {
    await t?.close();
  });

  async function insertSendingCampaign(ds: DataSource, projectId: string): Promise<string> {
    const [campaign] = await ds.query<{ id: string }[]>(
      `INSERT INTO campaigns (project_id, name, subject, body, from_email, audience_type, status, total_recipients, sent_at)
       VALUES ($1, 'Launch', 'Hello', '<p>Hi</p>', 'news@example.com', 'ALL', 'SENDING', 3, now()) RETURNING id`,
      [projectId],
    );
    const contacts = [];
    for (const email of ['a@example.net', 'b@example.net', 'c@example.net']) contacts.push(await insertContact(ds, projectId, email));
    const emails = await insertEmails(
      ds,
      projectId,
      contacts.slice(0, 2).map((contactId, i) => ({ contactId, campaignId: campaign.id, to: `${'ab'[i]}@example.net`, type: 'MARKETING' })),
    );
    await ds.query(`UPDATE emails SET status = 'SENT', sent_at = now() WHERE id = $1`, [emails[0]]);
    await ds.query(
      `INSERT INTO campaign_recipients (project_id, campaign_id, seq, contact_id, status, email_id)
       VALUES ($1, $2, 1, $3, 'QUEUED', $6), ($1, $2, 2, $4, 'QUEUED', $7), ($1, $2, 3, $5, 'PENDING', NULL)`,
      [projectId, campaign.id, contacts[0], contacts[1], contacts[2], emails[0], emails[1]],
    );
    return campaign.id;
  }

  it('labels request latency with the route pattern and status, never the raw URL', async () => {
    const contactId = randomUUID();
    const stray = `no-such-page-${randomUUID()}`;
    await request(t.url).get(`/contacts/${contactId}`).set(bearer(secretKey)).expect(404);
    await request(t.url).get(`/${stray}`).expect(404);
    const { text, samples } = await scrape(t);
    expect(sampleValue(samples, 'http_request_duration_seconds_count', { method: 'GET', route: '/contacts/:id', status_code: '404' })).toBe(
      1,
    );
    expect(sampleValue(samples, 'http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    // Buckets are cumulative and end with +Inf, equal to the count.
    const buckets = findSamples(samples, 'http_request_duration_seconds_bucket', { route: '/contacts/:id' });
    expect(buckets.at(-1)?.labels.le).toBe('+Inf');
    expect(buckets.at(-1)?.value).toBe(1);
    expect(text).not.toContain(contactId);
    expect(text).not.toContain(stray);
    expect(sampleValue(samples, 'process_cpu_seconds_total', { service: 'mail-api' })).toBeGreaterThan(0);
    expect(findSamples(samples, 'nodejs_eventloop_lag_seconds').length).toBe(1);
  });

  it('reports queue depth and the age of the oldest waiting job, for the mail queues only', async () => {
    const { samples } = await scrape(t);
    expect(sampleValue(samples, 'bullmq_queue_jobs', { queue: 'mail-ops-probe', state: 'waiting' })).toBe(1);
    expect(sampleValue(samples, 'bullmq_queue_jobs', { queue: 'mail-ops-probe', state: 'active' })).toBe(0);
    expect(sampleValue(samples, 'bullmq_queue_oldest_waiting_seconds', { queue: 'mail-ops-probe' })).toBeGreaterThanOrEqual(60);
    expect(findSamples(samples, 'bullmq_queue_jobs').filter((s) => !s.labels.queue.startsWith('mail-'))).toEqual([]);
  });

  it('counts the email backlog by status and reports the progress of a SENDING campaign, from Postgres, cached for 15 s', async () => {
    const { samples } = await scrape(t);
    const rows = await db.query<{ status: string; n: number }[]>(`SELECT status, count(*)::int AS n FROM emails GROUP BY status`);
    const byStatus = Object.fromEntries(rows.map((r) => [r.status, r.n]));
    expect(byStatus).toEqual({ QUEUED: 4, SENT: 2 });
    // The backlog only (QUEUED, SENDING: an index-backed read); finished emails are counters' business.
    for (const status of ['QUEUED', 'SENDING']) expect(sampleValue(samples, 'mail_emails', { status })).toBe(byStatus[status] ?? 0);
    expect(findSamples(samples, 'mail_emails', { status: 'SENT' })).toEqual([]);
    expect(sampleValue(samples, 'mail_campaigns', { status: 'SENDING' })).toBe(1);
    expect(sampleValue(samples, 'mail_campaigns', { status: 'DRAFT' })).toBe(0);
    // The SENDING campaigns together (decisions.md: no campaign id is a label value).
    expect(sampleValue(samples, 'mail_campaign_total_recipients', { status: 'SENDING' })).toBe(3);
    expect(sampleValue(samples, 'mail_campaign_recipients', { status: 'QUEUED' })).toBe(2);
    expect(sampleValue(samples, 'mail_campaign_recipients', { status: 'PENDING' })).toBe(1);
    expect(sampleValue(samples, 'mail_campaign_emails', { status: 'SENT' })).toBe(1);
    expect(sampleValue(samples, 'mail_campaign_emails', { status: 'QUEUED' })).toBe(1);
    expect(JSON.stringify(samples)).not.toContain(campaignId);

    // A new row within the cache window is not counted yet: one read serves every scrape for 15 s.
    await db.query(`UPDATE emails SET status = 'SENT', sent_at = now() WHERE id = $1`, [queuedIds[0]]);
    const again = await scrape(t);
    expect(sampleValue(again.samples, 'mail_emails', { status: 'QUEUED' })).toBe(4);
  });

  it('keeps /metrics and /admin/queues out of the OpenAPI document', async () => {
    const doc = await request(t.url).get('/openapi.json').expect(200);
    expect(Object.keys(doc.body.paths).filter((p) => p.startsWith('/metrics') || p.startsWith('/admin'))).toEqual([]);
  });

  it('refuses the dashboard without MAIL_ADMIN_TOKEN: no credential, a wrong one, a project key (401, Basic challenge)', async () => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues', '/admin/queues/static/images/logo.svg']) {
      const res = await request(t.url).get(path);
      expectMailError(res, 401, 'UNAUTHORIZED', /MAIL_ADMIN_TOKEN/);
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm="mail-api queue dashboard"/);
    }
    for (const authorization of [
      `Bearer ${ADMIN_TOKEN}x`,
      basic(`${ADMIN_TOKEN.slice(0, -1)}`),
      `Bearer ${secretKey}`,
      basic(secretKey),
      `Basic ${Buffer.from(ADMIN_TOKEN).toString('base64')}`, // no "user:" part
    ]) {
      const res = await request(t.url).get('/admin/queues/api/queues').set('Authorization', authorization);
      expectMailError(res, 401, 'UNAUTHORIZED', /MAIL_ADMIN_TOKEN/);
    }
  });

  it('opens the dashboard with the token (Bearer or Basic password) and lists the mail queues only', async () => {
    const page = await request(t.url).get('/admin/queues').set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('<base href="/admin/queues/" />');
    const api = await request(t.url).get('/admin/queues/api/queues').set('Authorization', basic(ADMIN_TOKEN)).expect(200);
    const names = (api.body.queues as { name: string }[]).map((q) => q.name);
    expect(names).toContain('mail-ops-probe');
    expect(names.filter((n) => !n.startsWith('mail-'))).toEqual([]);
    const probe = (api.body.queues as { name: string; counts: Record<string, number> }[]).find((q) => q.name === 'mail-ops-probe');
    expect(probe?.counts.waiting).toBe(1);
    // A path the board does not have is a 404 in the mail error shape.
    const missing = await request(t.url).get('/admin/queues/api/nothing-here').set('Authorization', basic(ADMIN_TOKEN));
    expectMailError(missing, 404, 'NOT_FOUND', 'not found');
  });

  describe('in Chromium', () => {
    const chromium = chromiumForSuite();

    it('renders the queue dashboard after the Basic prompt, and nothing without it', async () => {
      // Without credentials the browser gets the 401 challenge and nothing to render (headless
      // Chromium reports the unanswered challenge as a navigation error).
      const anonymous = await chromium.browser.newContext();
      const refused = await (await anonymous.newPage()).goto(`${t.url}/admin/queues`).then(
        (response) => `status ${response?.status()}`,
        (err: Error) => err.message,
      );
      expect(refused).toMatch(/status 401|ERR_INVALID_AUTH_CREDENTIALS/);
      await anonymous.close();

      const context = await chromium.browser.newContext({ httpCredentials: { username: 'operator', password: ADMIN_TOKEN } });
      expect(await queueBoardProblem(context, `${t.url}/admin/queues`, 'mail-ops-probe')).toBeNull();
      await context.close();
    }, 60_000);

    it('renders Swagger UI at /docs', async () => {
      expect(await swaggerUiOperations(chromium.browser, t.url, 'mail-api')).toBeGreaterThan(10);
    }, 60_000);
  });
});

describe('mail-api without MAIL_ADMIN_TOKEN', () => {
  let t: MailTestApp;
  beforeAll(async () => {
    t = await startMailApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('has no queue dashboard (404), whatever the request carries', async () => {
    expectMailError(await request(t.url).get('/admin/queues'), 404, 'NOT_FOUND', /./);
    expectMailError(await request(t.url).get('/admin/queues/api/queues').set('Authorization', 'Bearer anything'), 404, 'NOT_FOUND', /./);
  });
});
