import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import nodemailer from 'nodemailer';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { REDIS } from '@app/service-kit';
import type { MailConfig } from '../src/config/mail-config.js';
import { InboundSmtpService } from '../src/modules/bounces/inbound-smtp.service.js';
import type { MailCampaign, MailCampaignStats } from '../src/modules/campaigns/campaigns.dto.js';
import { CAMPAIGN_QUEUE } from '../src/modules/campaigns/campaigns.queue.js';
import { EMAIL_QUEUE } from '../src/modules/delivery/email-delivery.queue.js';
import { RelayThrottle } from '../src/modules/delivery/relay-throttle.js';
import { insertVerifiedDomain, waitFor } from './support/delivery-fixtures.js';
import { bearer, createProject } from './support/mail-api-helpers.js';
import { DeliveryHarness } from './support/delivery-harness.js';
import type { MailTestApp } from './support/mail-test-app.js';
import type { SmtpSink } from './support/smtp-sink.js';

const DOMAIN = 'campaigns.example.com';
const BOUNCE_DOMAIN = 'bounces.example.com';
const ARF = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'reports', 'ses-arf-abuse.eml');

describe('deliverability over whole campaigns (real Postgres, Redis, SMTP relay and report listener)', () => {
  let h: DeliveryHarness;
  let t: MailTestApp;
  let sink: SmtpSink;
  let db: DataSource;

  beforeAll(async () => {
    h = await DeliveryHarness.start({ MAIL_BOUNCE_DOMAIN: BOUNCE_DOMAIN, MAIL_INBOUND_SMTP_PORT: '0' });
    ({ t, sink, db } = h);
  });
  afterEach(async () => {
    sink.answerWith(null);
    await h.stopWorker();
  });
  afterAll(() => h?.close());

  const startWorker = (overrides: Partial<MailConfig> = {}) =>
    h.startWorker([EMAIL_QUEUE, CAMPAIGN_QUEUE], { ratePerSecond: 500, ...overrides });

  async function audience(name: string, size: number): Promise<{ p: MailProjectCredentials; addresses: string[] }> {
    const p = await createProject(t, name);
    await insertVerifiedDomain(db, p.id, DOMAIN);
    const addresses = Array.from({ length: size }, (_, i) => `r${i}@${name.toLowerCase()}.example.net`);
    await db.query(`INSERT INTO contacts (project_id, email, subscribed) SELECT $1, unnest($2::text[]), true`, [p.id, addresses]);
    return { p, addresses };
  }

  async function sendCampaign(p: MailProjectCredentials, name: string): Promise<MailCampaign> {
    const auth = bearer(p.secretKey);
    const created = await request(t.url)
      .post('/campaigns')
      .set(auth)
      .send({ name, subject: name, body: '<p>News {{unsubscribeUrl}}</p>', from: `news@${DOMAIN}`, audienceType: 'ALL' })
      .expect(200);
    const campaign = created.body.data as MailCampaign;
    await request(t.url).post(`/campaigns/${campaign.id}/send`).set(auth).expect(200);
    await waitFor(
      // Read from the database: polling the API every 50 ms for a minute would spend the key's rate limit.
      async () =>
        (await db.query<{ status: string }[]>(`SELECT status FROM campaigns WHERE id = $1`, [campaign.id]))[0]?.status === 'SENT'
          ? true
          : null,
      90_000,
      `campaign ${name} to be SENT`,
    );
    return campaign;
  }

  const stats = async (p: MailProjectCredentials, campaign: MailCampaign): Promise<MailCampaignStats> =>
    (await request(t.url).get(`/campaigns/${campaign.id}/stats`).set(bearer(p.secretKey)).expect(200)).body.data as MailCampaignStats;
  const received = (address: string) => sink.messages.filter((m) => m.envelope.to[0] === address);

  it('1,000 recipients, 50 hard bounces mid-campaign and 1 complaint: the next campaign to the same audience mails 949', async () => {
    const { p, addresses } = await audience('Loop', 1000);
    const bouncing = new Set(addresses.filter((_, i) => i % 20 === 7)); // 50, spread over the whole campaign
    sink.answerWith((to) => (bouncing.has(to[0]) ? { code: 550, message: '5.1.1 user unknown' } : null));
    const w = await startWorker();
    const first = await sendCampaign(p, 'First');
    expect(await stats(p, first)).toMatchObject({ totalRecipients: 1000, deliveredCount: 950, bouncedCount: 50, suppressedCount: 0 });

    // One recipient complains: the ARF report comes back to the VERP address of the message they got.
    const complainer = addresses[3];
    const [message] = received(complainer);
    const raw = readFileSync(ARF, 'utf8')
      .replaceAll('{{VERP}}', message.envelope.from)
      .replaceAll('{{RCPT}}', complainer)
      .replaceAll('{{EMAIL_ID}}', 'x')
      .replace(/\r?\n/g, '\r\n');
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: w.get(InboundSmtpService).port!, ignoreTLS: true });
    await transport.sendMail({ envelope: { from: '', to: message.envelope.from }, raw });
    transport.close();
    expect(await stats(p, first)).toMatchObject({ complainedCount: 1, complaintRate: 0.0011 });

    const listed = await request(t.url).get('/suppressions?limit=1').set(bearer(p.secretKey)).expect(200);
    expect(listed.body.total).toBe(51);

    const before = sink.messages.length;
    const second = await sendCampaign(p, 'Second');
    // The complainer was unsubscribed (not in the audience); the 50 bounced addresses are suppressed.
    expect(sink.messages.length - before).toBe(949);
    expect(await stats(p, second)).toMatchObject({
      totalRecipients: 999,
      sentCount: 949,
      deliveredCount: 949,
      bouncedCount: 0,
      suppressedCount: 50,
      complainedCount: 0,
    });
    // Each bounced address was offered to the relay once: the first campaign's refused try.
    const refusedTries = sink.refusals.filter((r) => bouncing.has(r.to![0]));
    expect(refusedTries).toHaveLength(50);
    for (const address of bouncing) expect(received(address)).toHaveLength(0);
    expect(received(complainer)).toHaveLength(1);
  }, 150_000);

  it('throttle drill: the relay answers 454 to 1 message in 10 for 20 s; every recipient gets exactly one message, none FAILED or BOUNCED, no transaction starts during a pause', async () => {
    const { p, addresses } = await audience('Drill', 1000);
    let offered = 0;
    let drillEnds = 0;
    sink.answerWith(() => {
      offered += 1;
      if (drillEnds === 0) drillEnds = Date.now() + 20_000;
      return Date.now() < drillEnds && offered % 10 === 0
        ? { code: 454, message: 'Throttling failure: Maximum sending rate exceeded.' }
        : null;
    });
    const w = await startWorker({ ratePerSecond: 100, deliverability: { ...t.config.deliverability, throttleBackoffMs: 250 } });
    // Every pause as the workers see it: the Redis key's `<until>:<length>`.
    const redis = w.get<Redis>(REDIS);
    const pauses = new Map<number, number>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const value = await redis.get(`${t.config.queuePrefix}:mail:relay-pause`);
        if (value) {
          const [until, length] = value.split(':').map(Number);
          pauses.set(until, length);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    // When the worker saw each throttling reply (RelayThrottle.seen, called where the reply surfaces) and
    // where the sink's log of transaction starts (MAIL FROM) stood one full event-loop turn later: the
    // sink, the API and the worker share this process, so a MAIL FROM the worker wrote before it saw the
    // reply (in flight, allowed to finish) has been read by the sink by then; every later entry is a
    // transaction started after the throttle was seen.
    const throttle = w.get(RelayThrottle);
    const seen = throttle.seen.bind(throttle);
    const closures: { at: number; firstStart: number }[] = [];
    throttle.seen = () => {
      seen();
      const at = Date.now();
      setImmediate(() => setImmediate(() => closures.push({ at, firstStart: sink.transactionStarts.length })));
    };
    const campaign = await sendCampaign(p, 'Drill');
    watching = false;
    await watch;

    const throttled = sink.refusals.filter((r) => r.code === 454);
    expect(throttled.length).toBeGreaterThan(0);
    expect(pauses.size).toBeGreaterThan(1);
    expect(Math.max(...pauses.values())).toBeGreaterThan(250); // it doubled while the relay kept throttling
    for (const address of addresses) expect(received(address)).toHaveLength(1);
    const statuses = await db.query<{ status: string; n: number }[]>(
      `SELECT status, count(*)::int AS n FROM emails WHERE campaign_id = $1 GROUP BY status`,
      [campaign.id],
    );
    expect(statuses).toEqual([{ status: 'SENT', n: 1000 }]);
    // The observed rate during each pause is 0: from the moment the worker saw a throttling reply (plus
    // the in-flight grace above) to the end of the pause it started or found, no transaction started.
    expect(closures).toHaveLength(throttled.length);
    const ends = [...pauses.keys()].sort((a, b) => a - b);
    for (const { at, firstStart } of closures) {
      const pauseEnd = ends.find((until) => until > at)!;
      const started = sink.transactionStarts.slice(firstStart).filter((startedAt) => startedAt < pauseEnd);
      expect({ at, pauseEnd, startedDuringPause: started }).toEqual({ at, pauseEnd, startedDuringPause: [] });
    }
    expect(await stats(p, campaign)).toMatchObject({ deliveredCount: 1000, bouncedCount: 0, suppressedCount: 0 });
  }, 150_000);
});
