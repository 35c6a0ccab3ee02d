import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { metricsLabelLeaks, parsePrometheusText, sampleValue } from '@app/service-kit/testing';
import { workerMetricsRefusalProblems, workerMetricsUrl, wrongMetricsAuthorizations } from '@app/service-kit/testing';
import { insertContact, insertEmails } from './support/delivery-fixtures.js';
import { createProject, expectMailError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { startWorkerProcess, workerEnv, type WorkerProcess } from './support/worker-process.js';

const METRICS_TOKEN = `metrics-${randomBytes(16).toString('hex')}`;
const WRONG = wrongMetricsAuthorizations(METRICS_TOKEN);

/**
 * decisions.md "Operator contract", metrics: with `METRICS_TOKEN` set, `GET /metrics` on the API port
 * and on the worker's port needs `Authorization: Bearer <token>` (401 otherwise), and no label value
 * is a project or campaign id. The API and the compiled worker (`dist/worker.js`) over HTTP.
 */
describe('mail-api /metrics behind METRICS_TOKEN', () => {
  let t: MailTestApp;
  let worker: WorkerProcess | undefined;
  let projectId: string;
  let campaignId: string;
  /** Scraped before the worker starts: its campaign sweep moves the fixture campaign on. */
  let apiText: string;

  beforeAll(async () => {
    t = await startMailApp({ env: { METRICS_TOKEN } });
    const db = t.app.get(DataSource);
    const project = await createProject(t);
    projectId = project.id;
    const [campaign] = await db.query<{ id: string }[]>(
      `INSERT INTO campaigns (project_id, name, subject, body, from_email, audience_type, status, total_recipients, sent_at)
       VALUES ($1, 'Launch', 'Hello', '<p>Hi</p>', 'news@example.com', 'ALL', 'SENDING', 2, now()) RETURNING id`,
      [projectId],
    );
    campaignId = campaign.id;
    const contacts = [await insertContact(db, projectId, 'a@example.net'), await insertContact(db, projectId, 'b@example.net')];
    const [email] = await insertEmails(db, projectId, [{ contactId: contacts[0], campaignId, to: 'a@example.net', type: 'MARKETING' }]);
    await db.query(
      `INSERT INTO campaign_recipients (project_id, campaign_id, seq, contact_id, status, email_id)
       VALUES ($1, $2, 1, $3, 'QUEUED', $5), ($1, $2, 2, $4, 'PENDING', NULL)`,
      [projectId, campaignId, contacts[0], contacts[1], email],
    );
    apiText = (await request(t.url).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200)).text;
    worker = startWorkerProcess('metrics-token', workerEnv(t.config, { MAIL_WORKER_METRICS_PORT: '0', METRICS_TOKEN }));
    await worker.ready;
  }, 60_000);
  afterAll(async () => {
    await worker?.kill();
    await t?.close();
  });

  const workerUrl = () => workerMetricsUrl(worker?.output() ?? '');

  it('refuses the API port without the bearer token (401, mail error shape, Bearer challenge)', async () => {
    for (const authorization of WRONG) {
      const req = request(t.url).get('/metrics');
      const res = authorization === undefined ? await req : await req.set('Authorization', authorization);
      expectMailError(res, 401, 'UNAUTHORIZED', /METRICS_TOKEN/);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(res.text).not.toContain('process_cpu_seconds_total');
    }
  });

  it('refuses the worker port without the bearer token (401), its probes stay open', async () => {
    expect(await workerMetricsRefusalProblems(workerUrl(), METRICS_TOKEN)).toEqual([]);
  });

  it('serves both ports with the token, and no label value is a project or campaign id', async () => {
    await request(t.url).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
    const samples = parsePrometheusText(apiText);
    // The SENDING campaigns together: audience, recipients by planning status, emails by delivery status.
    expect(sampleValue(samples, 'mail_campaign_total_recipients', { status: 'SENDING' })).toBe(2);
    expect(sampleValue(samples, 'mail_campaign_recipients', { status: 'QUEUED' })).toBe(1);
    expect(sampleValue(samples, 'mail_campaign_recipients', { status: 'PENDING' })).toBe(1);
    expect(sampleValue(samples, 'mail_campaign_emails', { status: 'QUEUED' })).toBe(1);
    const res = await fetch(`${workerUrl()}/metrics`, { headers: { Authorization: `bearer  ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    const workerText = await res.text();
    expect(sampleValue(parsePrometheusText(workerText), 'process_cpu_seconds_total', { service: 'mail-worker' })).toBeGreaterThan(0);
    expect(metricsLabelLeaks([apiText, workerText], [campaignId, projectId], /project|campaign|tenant|contact|workflow|user/)).toEqual([]);
  });
});

describe('mail-api /metrics without METRICS_TOKEN', () => {
  let t: MailTestApp;
  beforeAll(async () => {
    t = await startMailApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('stays open (the token is opt-in; the manifests set it)', async () => {
    await request(t.url).get('/metrics').expect(200);
  });
});
