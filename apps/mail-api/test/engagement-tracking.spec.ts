import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { startInProcessWorker } from '@app/service-kit/testing';
import { loadMailConfig, type MailConfig } from '../src/config/mail-config.js';
import type { MailCampaign, MailCampaignStats } from '../src/modules/campaigns/campaigns.dto.js';
import { CAMPAIGN_QUEUE } from '../src/modules/campaigns/campaigns.queue.js';
import { EMAIL_QUEUE } from '../src/modules/delivery/email-delivery.queue.js';
import { addTracking } from '../src/modules/engagement/email-tracking.js';
import { TrackingLinks } from '../src/modules/engagement/tracking-links.js';
import { WorkerModule } from '../src/worker.module.js';
import { insertVerifiedDomain, waitFor } from './support/delivery-fixtures.js';
import { bearer, createProject, expectMailError } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { startSmtpSink, type SinkMessage, type SmtpSink } from './support/smtp-sink.js';

const DOMAIN = 'engage.example.com';
const PUBLIC_URL = 'https://mail.test';
const BODY =
  '<html><body><p>Hi {{email}}</p><a href="https://shop.example/a?x=1&amp;y=2">A</a> <A HREF=\'https://shop.example/b\'>B</A> ' +
  '<a href=https://shop.example/c>C</a> <a href="mailto:help@example.com">mail</a> <a href="{{unsubscribeUrl}}">unsubscribe</a></body></html>';

/**
 * Opens, clicks and bounces of campaign emails: the pixel and click redirects of the emails as the
 * sink received them, counted once per contact in the stats and recorded as the contact's events
 * (which segments can use); forged or altered links; MAIL_TRACKING=false; permanent SMTP refusals.
 */
describe('engagement tracking (real Postgres, Redis, SMTP sink)', () => {
  let t: MailTestApp;
  let sink: SmtpSink;
  let db: DataSource;
  let worker: INestApplicationContext | null = null;

  beforeAll(async () => {
    sink = await startSmtpSink();
    // The seconds-after-delivery machine rule is off here (these tests open at once); engagement-analytics.spec tests it.
    t = await startMailApp({ env: { MAIL_SMTP_URL: sink.url, MAIL_PUBLIC_URL: PUBLIC_URL, MAIL_MACHINE_WINDOW_S: '0' } });
    db = t.app.get(DataSource);
  });
  afterEach(async () => {
    await worker?.close();
    worker = null;
  });
  afterAll(async () => {
    await t?.close();
    await sink?.close();
  });

  async function startWorker(overrides: Partial<MailConfig> = {}): Promise<void> {
    worker = await startInProcessWorker(WorkerModule.forRoot({ ...t.config, ratePerSecond: 200, ...overrides }), {
      queues: [EMAIL_QUEUE, CAMPAIGN_QUEUE],
    });
  }

  interface Sent {
    p: MailProjectCredentials;
    auth: Record<string, string>;
    campaign: MailCampaign;
    /** The message each address received. */
    byAddress: Map<string, SinkMessage>;
  }

  /** A project with `addresses` as subscribed contacts, and a campaign to all of them, sent and finished. */
  async function sendCampaign(name: string, addresses: string[]): Promise<Sent> {
    const p = await createProject(t, name);
    const auth = bearer(p.secretKey);
    await insertVerifiedDomain(db, p.id, DOMAIN);
    await db.query(`INSERT INTO contacts (project_id, email) SELECT $1, unnest($2::text[])`, [p.id, addresses]);
    const created = await request(t.url)
      .post('/campaigns')
      .set(auth)
      .send({ name, subject: 'News', body: BODY, from: `news@${DOMAIN}`, audienceType: 'ALL' })
      .expect(200);
    const campaign = created.body.data as MailCampaign;
    await request(t.url).post(`/campaigns/${campaign.id}/send`).set(auth).expect(200);
    await waitFor(
      async () => ((await request(t.url).get(`/campaigns/${campaign.id}`).set(auth)).body.data.status === 'SENT' ? true : null),
      20_000,
      'the campaign to be SENT',
    );
    const byAddress = new Map(sink.messages.filter((m) => addresses.includes(m.envelope.to[0])).map((m) => [m.envelope.to[0], m]));
    return { p, auth, campaign, byAddress };
  }

  const stats = async (s: Sent): Promise<MailCampaignStats> =>
    (await request(t.url).get(`/campaigns/${s.campaign.id}/stats`).set(s.auth).expect(200)).body.data as MailCampaignStats;

  /** Tracking paths (`/t/o/...`, `/t/c/...`) in a received message's HTML, in order. */
  async function trackingPaths(message: SinkMessage): Promise<{ open: string; clicks: string[] }> {
    const html = String((await sink.parse(message)).html);
    const paths = [...html.matchAll(/"https:\/\/mail\.test(\/t\/[oc]\/[A-Za-z0-9_-]+)"/g)].map((m) => m[1]);
    return { open: paths.find((x) => x.startsWith('/t/o/'))!, clicks: paths.filter((x) => x.startsWith('/t/c/')) };
  }

  async function eventsOf(projectId: string): Promise<{ email: string; name: string; data: Record<string, string> }[]> {
    return await db.query<{ email: string; name: string; data: Record<string, string> }[]>(
      `SELECT c.email, e.name, e.data FROM events e JOIN contacts c ON c.id = e.contact_id
        WHERE e.project_id = $1 AND e.name IN ('email.opened', 'email.clicked', 'email.bounced') ORDER BY c.email, e.name`,
      [projectId],
    );
  }

  it('the pixel and the links count once per contact; clicks redirect to the original URL; contact events; segments use them', async () => {
    await startWorker();
    const [a, b, c] = ['a@eng1.example.net', 'b@eng1.example.net', 'c@eng1.example.net'];
    const s = await sendCampaign('Engagement', [a, b, c]);
    const linksA = await trackingPaths(s.byAddress.get(a)!);
    const linksB = await trackingPaths(s.byAddress.get(b)!);
    // Three http(s) links are tracked; mailto: and the unsubscribe link are not.
    expect(linksA.clicks).toHaveLength(3);
    const parsedA = await sink.parse(s.byAddress.get(a)!);
    expect(parsedA.html).toContain('href="mailto:help@example.com"');
    expect(parsedA.html).toMatch(/href="https:\/\/mail\.test\/unsubscribe\/[A-Za-z0-9_-]+"/);
    // The pixel sits before </body>.
    expect(String(parsedA.html)).toMatch(/<img src="https:\/\/mail\.test\/t\/o\/[A-Za-z0-9_-]+"[^>]*><\/body>/);

    for (let i = 0; i < 3; i++) {
      const pixel = await request(t.url).get(linksA.open).expect(200);
      expect(pixel.headers['content-type']).toBe('image/gif');
      expect(pixel.headers['cache-control']).toContain('no-store');
      expect(pixel.body).toHaveLength(42);
    }
    const first = await request(t.url).get(linksA.clicks[0]).expect(302);
    expect(first.headers.location).toBe('https://shop.example/a?x=1&y=2');
    expect(first.headers['referrer-policy']).toBe('no-referrer');
    expect((await request(t.url).get(linksA.clicks[1]).expect(302)).headers.location).toBe('https://shop.example/b');
    expect((await request(t.url).get(linksA.clicks[2]).expect(302)).headers.location).toBe('https://shop.example/c');
    await request(t.url).get(linksA.clicks[0]).expect(302);
    // B only clicks (images blocked): the click counts as an open too.
    expect((await request(t.url).get(linksB.clicks[1]).expect(302)).headers.location).toBe('https://shop.example/b');

    // Machine counts (A's three quick clicks may be a burst) are engagement-analytics.spec's.
    expect(await stats(s)).toMatchObject({
      totalRecipients: 3,
      sentCount: 3,
      deliveredCount: 3,
      openedCount: 2,
      clickedCount: 2,
      bouncedCount: 0,
      suppressedCount: 0,
      complainedCount: 0,
      openRate: 0.6667,
      clickRate: 0.6667,
      bounceRate: 0,
      complaintRate: 0,
    });
    const emailIdOf = async (address: string) =>
      (await db.query<{ id: string }[]>(`SELECT id FROM emails WHERE campaign_id = $1 AND to_email = $2`, [s.campaign.id, address]))[0].id;
    const [idA, idB] = [await emailIdOf(a), await emailIdOf(b)];
    expect(await eventsOf(s.p.id)).toEqual([
      { email: a, name: 'email.clicked', data: { emailId: idA, campaignId: s.campaign.id, url: 'https://shop.example/a?x=1&y=2' } },
      { email: a, name: 'email.opened', data: { emailId: idA, campaignId: s.campaign.id } },
      { email: b, name: 'email.clicked', data: { emailId: idB, campaignId: s.campaign.id, url: 'https://shop.example/b' } },
      { email: b, name: 'email.opened', data: { emailId: idB, campaignId: s.campaign.id } },
    ]);

    const segment = await request(t.url)
      .post('/segments')
      .set(s.auth)
      .send({
        name: 'Openers',
        type: 'DYNAMIC',
        condition: { logic: 'AND', groups: [{ filters: [{ field: 'event.email.opened', operator: 'triggered' }] }] },
      })
      .expect(201);
    const members = await request(t.url).get(`/segments/${segment.body.id}/contacts`).set(s.auth).expect(200);
    expect(members.body.items.map((m: { email: string }) => m.email).sort()).toEqual([a, b]);
  });

  it('an open is counted with its email.opened event or not at all: a failed event insert leaves the email unopened', async () => {
    await startWorker();
    const address = 'x@eng-atomic.example.net';
    const s = await sendCampaign('Atomic', [address]);
    const links = await trackingPaths(s.byAddress.get(address)!);
    // Postgres itself refuses this project's email.opened events (a real failure inside the transaction).
    await db.query(`CREATE OR REPLACE FUNCTION refuse_opened_event() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.name = 'email.opened' AND NEW.project_id = '${s.p.id}' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
    await db.query(`CREATE TRIGGER refuse_opened_event BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_opened_event()`);
    try {
      // The person still gets the pixel (and a click its redirect); nothing is counted.
      await request(t.url).get(links.open).expect(200);
      expect((await request(t.url).get(links.clicks[0]).expect(302)).headers.location).toBe('https://shop.example/a?x=1&y=2');
      expect(await stats(s)).toMatchObject({ openedCount: 0, clickedCount: 0 });
      expect(await eventsOf(s.p.id)).toEqual([]);
    } finally {
      await db.query('DROP TRIGGER refuse_opened_event ON events');
      await db.query('DROP FUNCTION refuse_opened_event()');
    }
    // The next open counts, with its event.
    await request(t.url).get(links.open).expect(200);
    expect(await stats(s)).toMatchObject({ openedCount: 1, clickedCount: 0 });
    expect((await eventsOf(s.p.id)).map((e) => e.name)).toEqual(['email.opened']);
  });

  /**
   * Postgres refuses this project's `name` events: `times` times (a sequence counts the refusals, and a
   * sequence is not rolled back with the refused transaction), or always when `times` is null.
   */
  async function refuseEvents(projectId: string, name: string, times: number | null): Promise<() => Promise<void>> {
    const tag = `refuse_${projectId.replace(/-/g, '')}`;
    await db.query(`CREATE SEQUENCE ${tag}_seq`);
    const refused = times === null ? 'true' : `nextval('${tag}_seq') <= ${times}`;
    await db.query(`CREATE FUNCTION ${tag}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.name = '${name}' AND NEW.project_id = '${projectId}' AND ${refused} THEN RAISE EXCEPTION 'refused by the test'; END IF;
      RETURN NEW; END $$`);
    await db.query(`CREATE TRIGGER ${tag} BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION ${tag}()`);
    return async () => {
      await db.query(`DROP TRIGGER ${tag} ON events`);
      await db.query(`DROP FUNCTION ${tag}()`);
      await db.query(`DROP SEQUENCE ${tag}_seq`);
    };
  }

  /** A project with one contact and a verified domain, and a DRAFT campaign to it. */
  async function draftCampaign(name: string, address: string): Promise<Omit<Sent, 'byAddress'>> {
    const p = await createProject(t, name);
    const auth = bearer(p.secretKey);
    await insertVerifiedDomain(db, p.id, DOMAIN);
    await db.query(`INSERT INTO contacts (project_id, email) VALUES ($1, $2)`, [p.id, address]);
    const created = await request(t.url)
      .post('/campaigns')
      .set(auth)
      .send({ name, subject: 'News', body: BODY, from: `news@${DOMAIN}`, audienceType: 'ALL' })
      .expect(200);
    return { p, auth, campaign: created.body.data as MailCampaign };
  }

  async function sendAndFinish(s: Omit<Sent, 'byAddress'>): Promise<void> {
    await request(t.url).post(`/campaigns/${s.campaign.id}/send`).set(s.auth).expect(200);
    await waitFor(
      async () => ((await request(t.url).get(`/campaigns/${s.campaign.id}`).set(s.auth)).body.data.status === 'SENT' ? true : null),
      20_000,
      'the campaign to be SENT',
    );
  }

  const sentEvents = async (projectId: string) =>
    (await db.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM events WHERE project_id = $1 AND name = 'email.sent'`, [projectId]))[0]
      .n;

  it('email.sent commits with its SENT: a refused event insert rolls the outcome back with it, and the retry writes both', async () => {
    await startWorker();
    const address = 'once@eng-sent.example.net';
    const s = await draftCampaign('Sent atomic', address);
    const restore = await refuseEvents(s.p.id, 'email.sent', 1);
    try {
      await sendAndFinish(s);
    } finally {
      await restore();
    }
    expect(await sentEvents(s.p.id)).toBe(1);
    expect(sink.messages.filter((m) => m.envelope.to[0] === address)).toHaveLength(1);
    expect(await stats({ ...s, byAddress: new Map() })).toMatchObject({ deliveredCount: 1 });
  });

  it('an email.sent event Postgres always refuses: the outcome is still SENT (the message is never sent twice), the event is lost', async () => {
    await startWorker();
    const address = 'always@eng-sent.example.net';
    const s = await draftCampaign('Sent refused', address);
    const restore = await refuseEvents(s.p.id, 'email.sent', null);
    try {
      await sendAndFinish(s);
      expect(await sentEvents(s.p.id)).toBe(0);
    } finally {
      await restore();
    }
    const [row] = await db.query<{ status: string }[]>(`SELECT status FROM emails WHERE campaign_id = $1`, [s.campaign.id]);
    expect(row.status).toBe('SENT');
    expect(sink.messages.filter((m) => m.envelope.to[0] === address)).toHaveLength(1);
  });

  it('email.bounced commits with its FAILED: a refused event insert is retried with the outcome', async () => {
    await startWorker();
    const address = 'bounce@eng-sent.example.net';
    const s = await draftCampaign('Bounce atomic', address);
    const restore = await refuseEvents(s.p.id, 'email.bounced', 1);
    sink.refuseNext(550, 1);
    try {
      await sendAndFinish(s);
    } finally {
      await restore();
    }
    expect((await eventsOf(s.p.id)).map((e) => [e.email, e.name])).toEqual([[address, 'email.bounced']]);
    expect(await stats({ ...s, byAddress: new Map() })).toMatchObject({ bouncedCount: 1 });
  });

  it('forged, altered and swapped tokens are a 400 and count nothing: no open redirect', async () => {
    await startWorker();
    const s = await sendCampaign('Forgery', ['x@eng2.example.net']);
    const links = await trackingPaths(s.byAddress.get('x@eng2.example.net')!);
    const token = links.clicks[0].slice('/t/c/'.length);
    const raw = Buffer.from(token, 'base64url');
    // The URL is signed: another target with the same MAC is refused.
    const evil = Buffer.concat([raw.subarray(0, 48), Buffer.from('https://evil.example/phish')]).toString('base64url');
    const openToken = links.open.slice('/t/o/'.length);
    const flipped = Buffer.from(openToken, 'base64url');
    flipped[5] ^= 1;
    for (const path of [
      `/t/c/${evil}`,
      `/t/c/${openToken}`,
      `/t/o/${token}`,
      `/t/o/${flipped.toString('base64url')}`,
      `/t/o/${openToken}x`,
      '/t/c/not-a-token',
      `/t/c/${'A'.repeat(4000)}`,
    ]) {
      const res = await request(t.url).get(path);
      expectMailError(res, 400, 'INVALID_TRACKING_LINK', 'invalid tracking link', { suggestion: 'use the complete link from the email' });
      expect(res.headers.location).toBeUndefined();
    }
    // A token signed with another secret (another deployment) is not ours either.
    const foreign = new TrackingLinks({ ...t.config, linkSecret: 'another-secret' }).clickUrl(
      { projectId: s.p.id, emailId: s.campaign.id },
      'https://evil.example',
    );
    expect((await request(t.url).get(new URL(foreign).pathname)).status).toBe(400);
    expect(await stats(s)).toMatchObject({ openedCount: 0, clickedCount: 0 });
    expect(await eventsOf(s.p.id)).toEqual([]);
  });

  it('MAIL_TRACKING=false sends marketing emails with their links as written and no pixel', async () => {
    await startWorker({ tracking: false });
    const s = await sendCampaign('Untracked', ['y@eng3.example.net']);
    const html = String((await sink.parse(s.byAddress.get('y@eng3.example.net')!)).html);
    expect(html).toContain('href="https://shop.example/a?x=1&amp;y=2"');
    expect(html).not.toContain('/t/o/');
    expect(html).not.toContain('/t/c/');
  });

  it('permanent SMTP refusals are bounces: FAILED, counted in the stats, email.bounced events; the campaign still ends SENT', async () => {
    await startWorker();
    sink.refuseNext(550, 2);
    const addresses = ['b1@eng4.example.net', 'b2@eng4.example.net', 'b3@eng4.example.net', 'b4@eng4.example.net'];
    const s = await sendCampaign('Bounces', addresses);
    expect(s.byAddress.size).toBe(2);
    expect(await stats(s)).toMatchObject({ totalRecipients: 4, sentCount: 4, deliveredCount: 2, bouncedCount: 2, bounceRate: 0.5 });
    const bounced = (await eventsOf(s.p.id)).filter((e) => e.name === 'email.bounced');
    expect(bounced.map((e) => e.email).sort()).toEqual(addresses.filter((a) => !s.byAddress.has(a)).sort());
    expect(bounced[0].data).toMatchObject({ campaignId: s.campaign.id, error: expect.stringMatching(/^SMTP 550/) });
  });

  describe('MAIL_TRACKING', () => {
    it('is on by default; "false" turns it off; anything else is a configuration error', () => {
      const dataDir = t.config.dataDir;
      expect(loadMailConfig({ DATA_DIR: dataDir }).tracking).toBe(true);
      expect(loadMailConfig({ DATA_DIR: dataDir, MAIL_TRACKING: 'false' }).tracking).toBe(false);
      expect(() => loadMailConfig({ DATA_DIR: dataDir, MAIL_TRACKING: 'no' })).toThrow(/MAIL_TRACKING/);
    });
  });

  describe('addTracking (the HTML rewrite)', () => {
    const urls = {
      open: 'https://t.example/o',
      click: (url: string) => `https://t.example/c?u=${encodeURIComponent(url)}`,
      keep: (url: string) => url.startsWith('https://t.example/'),
    };

    it('rewrites http(s) hrefs of <a> only, in any quoting; keeps other attributes, comments and other tags', () => {
      const html =
        '<!-- <a href="https://in.comment"> --><a class="x" href="https://a.example/?q=1&amp;r=2" title="t>">A</a>' +
        '<link href="https://style.example/s.css"><a href=\'HTTP://B.example\'>B</a><a data-href="https://no.example">n</a>' +
        '<a href="#top">top</a><a href="https://t.example/unsubscribe/x">u</a>';
      expect(addTracking(html, urls)).toBe(
        '<!-- <a href="https://in.comment"> --><a class="x" href="https://t.example/c?u=https%3A%2F%2Fa.example%2F%3Fq%3D1%26r%3D2" title="t>">A</a>' +
          '<link href="https://style.example/s.css"><a href="https://t.example/c?u=HTTP%3A%2F%2FB.example">B</a><a data-href="https://no.example">n</a>' +
          '<a href="#top">top</a><a href="https://t.example/unsubscribe/x">u</a>' +
          '<img src="https://t.example/o" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0">',
      );
    });

    it('hostile markup (unclosed quotes and tags, 500 KB of <a) is handled in one pass', () => {
      const hostile = `${'<a href="x '.repeat(20_000)}${'<a '.repeat(100_000)}<a href='`;
      const out = addTracking(hostile, urls);
      expect(out.startsWith(hostile)).toBe(true);
      const many = '<a href="https://a.example/">x</a>'.repeat(10_000);
      expect(addTracking(many, urls).split('https://t.example/c?u=').length - 1).toBe(10_000);
    });
  });
});
