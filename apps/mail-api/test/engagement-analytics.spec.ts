import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { MailProjectCredentials } from '@app/contracts';
import { startInProcessWorker } from '@app/service-kit/testing';
import type { MailCampaignLink } from '../src/modules/campaigns/campaign-links.dto.js';
import type { MailCampaign, MailCampaignStats } from '../src/modules/campaigns/campaigns.dto.js';
import { CAMPAIGN_QUEUE } from '../src/modules/campaigns/campaigns.queue.js';
import { EMAIL_QUEUE } from '../src/modules/delivery/email-delivery.queue.js';
import { classifyHits, UserAgentList, type HitToClassify } from '../src/modules/engagement/machine-detection.js';
import { MACHINE_USER_AGENTS } from '../src/modules/engagement/machine-user-agents.js';
import { compileCondition, type SegmentCondition } from '../src/modules/segments/segment-condition.js';
import { WorkerModule } from '../src/worker.module.js';
import { insertVerifiedDomain, waitFor } from './support/delivery-fixtures.js';
import { bearer, createProject } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';
import { startSmtpSink, type SinkMessage, type SmtpSink } from './support/smtp-sink.js';

const DOMAIN = 'analytics.example.com';
const PUBLIC_URL = 'https://mail.test';
const LINKS = [
  'https://shop.example/1',
  'https://shop.example/2',
  'https://shop.example/3',
  'https://shop.example/4',
  'https://shop.example/5',
];
const BODY = `<html><body><p>Hi</p>${LINKS.map((url, i) => `<a href="${url}">link ${i + 1}</a>`).join(' ')}</body></html>`;
/** A desktop browser, and Gmail's image proxy (a person's open: it fetches when the reader opens the message). */
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const GMAIL_PROXY = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
/** Microsoft's link scanner and Yahoo's image proxy, both on the bundled list. */
const SCANNER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) BingPreview/1.0b';
const IMAGE_PROXY = 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html';

interface Sent {
  p: MailProjectCredentials;
  auth: Record<string, string>;
  campaign: MailCampaign;
  byAddress: Map<string, SinkMessage>;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

interface Recorded {
  email: string;
  kind: 'OPEN' | 'CLICK';
  url: string | null;
  machine: boolean;
  machine_reason: string | null;
}

/**
 * Engagement analytics (issue #31) over HTTP against the real app and worker: each open and click
 * marked a person's or a machine's by the four rules, campaign stats and per-link counts agreeing with
 * the recorded events, the `campaign.<id>` segment field and a follow-up to non-openers. The machine
 * window is 60 s here: emails meant to be opened "after the window" are dated an hour back in Postgres
 * (no waiting), one meant "within" it is dated now.
 */
describe('engagement analytics (real Postgres, Redis, SMTP sink)', () => {
  let t: MailTestApp;
  let sink: SmtpSink;
  let db: DataSource;
  let worker: INestApplicationContext;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startMailApp({ env: { MAIL_SMTP_URL: sink.url, MAIL_PUBLIC_URL: PUBLIC_URL, MAIL_MACHINE_WINDOW_S: '60' } });
    db = t.app.get(DataSource);
    worker = await startInProcessWorker(WorkerModule.forRoot({ ...t.config, ratePerSecond: 200 }), {
      queues: [EMAIL_QUEUE, CAMPAIGN_QUEUE],
    });
  });
  afterAll(async () => {
    await worker?.close();
    await t?.close();
    await sink?.close();
  });

  async function project(name: string, addresses: string[]): Promise<{ p: MailProjectCredentials; auth: Record<string, string> }> {
    const p = await createProject(t, name);
    await insertVerifiedDomain(db, p.id, DOMAIN);
    await db.query(`INSERT INTO contacts (project_id, email) SELECT $1, unnest($2::text[])`, [p.id, addresses]);
    return { p, auth: bearer(p.secretKey) };
  }

  /** Creates and sends a campaign, waits for SENT; every email's hand-off to SMTP is then dated an hour back. */
  async function sendCampaign(
    owner: { p: MailProjectCredentials; auth: Record<string, string> },
    name: string,
    audience: Record<string, unknown> = { audienceType: 'ALL' },
  ): Promise<Sent> {
    const created = await request(t.url)
      .post('/campaigns')
      .set(owner.auth)
      .send({ name, subject: name, body: BODY, from: `news@${DOMAIN}`, ...audience })
      .expect(200);
    const campaign = created.body.data as MailCampaign;
    await request(t.url).post(`/campaigns/${campaign.id}/send`).set(owner.auth).expect(200);
    await waitFor(
      async () => ((await request(t.url).get(`/campaigns/${campaign.id}`).set(owner.auth)).body.data.status === 'SENT' ? true : null),
      20_000,
      'the campaign to be SENT',
    );
    await db.query(`UPDATE emails SET sent_at = sent_at - interval '1 hour' WHERE campaign_id = $1`, [campaign.id]);
    const ids = new Set(
      (await db.query<{ id: string }[]>(`SELECT id FROM emails WHERE campaign_id = $1`, [campaign.id])).map((row) => row.id),
    );
    const mine = sink.messages.filter((m) => [...ids].some((id) => m.messageId?.startsWith(`<${id}@`)));
    return { ...owner, campaign, byAddress: new Map(mine.map((m) => [m.envelope.to[0], m])) };
  }

  async function trackingPaths(message: SinkMessage): Promise<{ open: string; clicks: string[] }> {
    const html = String((await sink.parse(message)).html);
    const paths = [...html.matchAll(/"https:\/\/mail\.test(\/t\/[oc]\/[A-Za-z0-9_-]+)"/g)].map((m) => m[1]);
    return { open: paths.find((x) => x.startsWith('/t/o/'))!, clicks: paths.filter((x) => x.startsWith('/t/c/')) };
  }

  const open = (path: string, ua = BROWSER) => request(t.url).get(path).set('User-Agent', ua).expect(200);
  const click = async (path: string, ua = BROWSER) => (await request(t.url).get(path).set('User-Agent', ua).expect(302)).headers.location;

  async function recorded(campaignId: string): Promise<Recorded[]> {
    return db.query<Recorded[]>(
      `SELECT e.to_email AS email, g.kind, g.url, g.machine, g.machine_reason
         FROM email_engagements g JOIN emails e ON e.id = g.email_id
        WHERE g.campaign_id = $1 ORDER BY e.to_email, g.occurred_at, g.url`,
      [campaignId],
    );
  }

  const stats = async (s: Sent) =>
    (await request(t.url).get(`/campaigns/${s.campaign.id}/stats`).set(s.auth).expect(200)).body.data as MailCampaignStats;
  const links = async (s: Sent) =>
    (await request(t.url).get(`/campaigns/${s.campaign.id}/links`).set(s.auth).expect(200)).body.data.items as MailCampaignLink[];

  it('HEAD, a listed scanner or proxy, a hit within the window and a link burst are machine; a browser after the window is a person', async () => {
    const [person, scanner, proxy, head, fresh, burst] = ['person', 'scanner', 'proxy', 'head', 'fresh', 'burst'].map(
      (who) => `${who}@rules.example.net`,
    );
    const s = await sendCampaign(await project('Rules', [person, scanner, proxy, head, fresh, burst]), 'Rules');
    const paths = new Map(await Promise.all([...s.byAddress].map(async ([to, m]) => [to, await trackingPaths(m)] as const)));

    // A person, after the window: opened through Gmail's proxy, then link 1 clicked twice (one recipient for it).
    await open(paths.get(person)!.open, GMAIL_PROXY);
    expect(await click(paths.get(person)!.clicks[0])).toBe(LINKS[0]);
    expect(await click(paths.get(person)!.clicks[0])).toBe(LINKS[0]);
    // A link scanner clicks link 1 (still redirected); an image proxy loads the pixel.
    expect(await click(paths.get(scanner)!.clicks[0], SCANNER)).toBe(LINKS[0]);
    await open(paths.get(proxy)!.open, IMAGE_PROXY);
    // HEAD requests, with a browser's user agent: the pixel answers 200, the link 302 to its URL.
    await request(t.url).head(paths.get(head)!.open).set('User-Agent', BROWSER).expect(200);
    const headClick = await request(t.url).head(paths.get(head)!.clicks[1]).set('User-Agent', BROWSER).expect(302);
    expect(headClick.headers.location).toBe(LINKS[1]);
    // Within the window: the email was handed to SMTP just now.
    await db.query(`UPDATE emails SET sent_at = now() WHERE campaign_id = $1 AND to_email = $2`, [s.campaign.id, fresh]);
    await open(paths.get(fresh)!.open);
    expect(await click(paths.get(fresh)!.clicks[0])).toBe(LINKS[0]);
    // Five links of one email at once: the third and later distinct ones are a machine's.
    const burstClicks = await Promise.all(paths.get(burst)!.clicks.map((path) => click(path)));
    expect(burstClicks.sort()).toEqual(LINKS);

    const rows = await recorded(s.campaign.id);
    const of = (email: string) => rows.filter((r) => r.email === email).map((r) => [r.kind, r.url, r.machine_reason]);
    expect(of(person)).toEqual([
      ['OPEN', null, null],
      ['CLICK', LINKS[0], null],
      ['CLICK', LINKS[0], null],
    ]);
    expect(of(scanner)).toEqual([['CLICK', LINKS[0], 'USER_AGENT']]);
    expect(of(proxy)).toEqual([['OPEN', null, 'USER_AGENT']]);
    expect(of(head)).toEqual([
      ['OPEN', null, 'HEAD'],
      ['CLICK', LINKS[1], 'HEAD'],
    ]);
    expect(of(fresh)).toEqual([
      ['OPEN', null, 'WINDOW'],
      ['CLICK', LINKS[0], 'WINDOW'],
    ]);
    const burstReasons = rows.filter((r) => r.email === burst).map((r) => r.machine_reason);
    expect(burstReasons).toHaveLength(5);
    expect(burstReasons.filter((reason) => reason === null)).toHaveLength(2);
    expect(burstReasons.filter((reason) => reason === 'BURST')).toHaveLength(3);
    expect(rows.every((r) => r.machine === (r.machine_reason !== null))).toBe(true);

    // Stats count recipients: a person's open or click (person, burst); machine ones on their own.
    expect(await stats(s)).toEqual({
      totalRecipients: 6,
      sentCount: 6,
      deliveredCount: 6,
      openedCount: 2,
      clickedCount: 2,
      machineOpenedCount: 5,
      machineClickedCount: 4,
      bouncedCount: 0,
      suppressedCount: 0,
      complainedCount: 0,
      openRate: 0.3333,
      clickRate: 0.3333,
      bounceRate: 0,
      complaintRate: 0,
    });
    // Per link, computed here from the recorded clicks: every click, recipients with a person's click, machine clicks.
    const expected = LINKS.map((url) => {
      const clicks = rows.filter((r) => r.kind === 'CLICK' && r.url === url);
      const people = new Set(clicks.filter((r) => !r.machine).map((r) => r.email));
      return { url, clicks: clicks.length, uniqueClicks: people.size, machineClicks: clicks.filter((r) => r.machine).length };
    }).sort((a, b) => b.clicks - a.clicks || (a.url < b.url ? -1 : 1));
    expect(await links(s)).toEqual(expected);
    expect(expected[0]).toEqual({ url: LINKS[0], clicks: 5, uniqueClicks: expect.any(Number), machineClicks: expect.any(Number) });

    // Only a person's first open and first click become contact events.
    const events = await db.query<{ email: string; name: string }[]>(
      `SELECT c.email, e.name FROM events e JOIN contacts c ON c.id = e.contact_id
        WHERE e.project_id = $1 AND e.name IN ('email.opened', 'email.clicked') ORDER BY c.email, e.name`,
      [s.p.id],
    );
    expect(events).toEqual([
      { email: burst, name: 'email.clicked' },
      { email: burst, name: 'email.opened' },
      { email: person, name: 'email.clicked' },
      { email: person, name: 'email.opened' },
    ]);
  });

  it("GET /campaigns/{id}/links: another project's campaign is a 404; a campaign without clicks has no items", async () => {
    const s = await sendCampaign(await project('Links', ['quiet@links.example.net']), 'Quiet');
    expect(await links(s)).toEqual([]);
    const other = await createProject(t, 'Links other');
    const res = await request(t.url).get(`/campaigns/${s.campaign.id}/links`).set(bearer(other.secretKey)).expect(404);
    expect(res.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND', statusCode: 404 } });
  });

  const campaignFilter = (campaignId: string, operator: string, extra: Record<string, unknown> = {}) => ({
    logic: 'AND',
    groups: [{ filters: [{ field: `campaign.${campaignId}`, operator, ...extra }] }],
  });
  const CAMPAIGN_OPERATORS = ['received', 'opened', 'clicked', 'notOpened', 'notClicked'];

  async function segment(auth: Record<string, string>, name: string, condition: object): Promise<{ id: string; memberCount: number }> {
    const res = await request(t.url).post('/segments').set(auth).send({ name, type: 'DYNAMIC', condition }).expect(201);
    return res.body as { id: string; memberCount: number };
  }
  async function members(auth: Record<string, string>, segmentId: string): Promise<string[]> {
    const res = await request(t.url).get(`/segments/${segmentId}/contacts`).set(auth).expect(200);
    return (res.body.items as { email: string }[]).map((c) => c.email).sort();
  }

  it("campaign.<id> filters count a person's opens and clicks; a follow-up to notOpened reaches exactly the non-openers (machine-only openers included)", async () => {
    const [opener, clicker, machine, silent, late] = ['opener', 'clicker', 'machine', 'silent', 'late'].map(
      (w) => `${w}@follow.example.net`,
    );
    const owner = await project('Follow-up', [opener, clicker, machine, silent]);
    const s = await sendCampaign(owner, 'First');
    // A contact added after the send received nothing.
    await db.query(`INSERT INTO contacts (project_id, email) VALUES ($1, $2)`, [s.p.id, late]);
    const paths = new Map(await Promise.all([...s.byAddress].map(async ([to, m]) => [to, await trackingPaths(m)] as const)));
    await open(paths.get(opener)!.open);
    await click(paths.get(clicker)!.clicks[2]);
    await open(paths.get(machine)!.open, IMAGE_PROXY);
    await click(paths.get(machine)!.clicks[0], SCANNER);

    const expected: Record<string, string[]> = {
      received: [clicker, machine, opener, silent],
      opened: [clicker, opener],
      clicked: [clicker],
      notOpened: [machine, silent],
      notClicked: [machine, opener, silent],
    };
    const segments: Record<string, string> = {};
    for (const operator of CAMPAIGN_OPERATORS) {
      const created = await segment(s.auth, operator, campaignFilter(s.campaign.id, operator));
      segments[operator] = created.id;
      expect({ operator, memberCount: created.memberCount, members: await members(s.auth, created.id) }).toEqual({
        operator,
        memberCount: expected[operator].length,
        members: expected[operator],
      });
    }

    const followUp = await sendCampaign(owner, 'Follow-up', { audienceType: 'SEGMENT', segmentId: segments.notOpened });
    expect([...followUp.byAddress.keys()].sort()).toEqual([machine, silent]);
    const recipients = await db.query<{ to_email: string }[]>(`SELECT to_email FROM emails WHERE campaign_id = $1 ORDER BY to_email`, [
      followUp.campaign.id,
    ]);
    expect(recipients.map((r) => r.to_email)).toEqual([machine, silent]);
    expect(await stats(followUp)).toMatchObject({ totalRecipients: 2, deliveredCount: 2 });
  });

  it("another project's campaign id in a condition selects nobody there, exactly like an unknown id; malformed campaign filters are 422", async () => {
    const addresses = ['a@iso.example.net', 'b@iso.example.net'];
    const a = await sendCampaign(await project('Iso A', addresses), 'A campaign');
    await open((await trackingPaths(a.byAddress.get(addresses[0])!)).open);
    // Project B has contacts with the same addresses, and a sent campaign of its own.
    const b = await sendCampaign(await project('Iso B', addresses), 'B campaign');
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const operator of CAMPAIGN_OPERATORS) {
      const foreign = await segment(b.auth, `foreign ${operator}`, campaignFilter(a.campaign.id, operator));
      const none = await segment(b.auth, `unknown ${operator}`, campaignFilter(unknown, operator));
      expect({ operator, foreign: foreign.memberCount, unknown: none.memberCount }).toEqual({ operator, foreign: 0, unknown: 0 });
      expect(await members(b.auth, foreign.id)).toEqual([]);
      // The same operator on B's own campaign does select B's contacts (the check can fail).
      if (operator === 'received') expect((await segment(b.auth, 'own', campaignFilter(b.campaign.id, operator))).memberCount).toBe(2);
    }

    for (const [filter, field] of [
      [{ field: 'campaign.not-a-uuid', operator: 'received' }, 'field'],
      [{ field: `campaign.${a.campaign.id}`, operator: 'equals', value: 'x' }, 'operator'],
      [{ field: `campaign.${a.campaign.id}`, operator: 'opened', value: true }, 'value'],
      [{ field: 'email', operator: 'notOpened' }, 'operator'],
    ] as const) {
      const res = await request(t.url)
        .post('/segments')
        .set(b.auth)
        .send({ name: 'bad', type: 'DYNAMIC', condition: { logic: 'AND', groups: [{ filters: [filter] }] } })
        .expect(422);
      expect(res.body.error.errors.map((e: { field: string }) => e.field)).toContain(`condition.groups[0].filters[0].${field}`);
    }
  });

  it('campaign.<id> filters are index-backed: on a 100,000-contact project no events table is read by a sequential scan', async () => {
    const p = await createProject(t, 'Explain');
    const contacts = 100_000;
    await db.query(
      `INSERT INTO contacts (project_id, email) SELECT $1, 'c' || g || '@explain.example.net' FROM generate_series(1, $2::int) g`,
      [p.id, contacts],
    );
    const [{ id: campaignId }] = await db.query<{ id: string }[]>(
      `INSERT INTO campaigns (project_id, name, subject, body, from_email, audience_type, status, total_recipients, snapshot_at)
       VALUES ($1, 'Explain', 'S', 'B', 'news@explain.example.net', 'ALL', 'SENT', $2, now()) RETURNING id`,
      [p.id, contacts],
    );
    // One email per contact: a person opened 3 in 10, a machine only 2 in 10 more; every 50th bounced. Each
    // row holds its rendered HTML (1.6 KB here; real campaign emails hold more), as sent emails do.
    await db.query(
      `INSERT INTO emails (project_id, campaign_id, contact_id, type, to_email, from_email, subject, html, status, sent_at,
                           opened_at, machine_opened_at, bounced_at)
       SELECT $1, $2, c.id, 'MARKETING', c.email, 'news@explain.example.net', 'S', repeat(md5(c.email), 50),
              CASE WHEN c.n % 50 = 0 THEN 'FAILED' ELSE 'SENT' END, now() - interval '1 day',
              CASE WHEN c.n % 50 <> 0 AND c.n % 10 < 3 THEN now() END,
              CASE WHEN c.n % 50 <> 0 AND c.n % 10 BETWEEN 3 AND 4 THEN now() END,
              CASE WHEN c.n % 50 = 0 THEN now() END
         FROM (SELECT id, email, row_number() OVER (ORDER BY id) AS n FROM contacts WHERE project_id = $1) c`,
      [p.id, campaignId],
    );
    await db.query('VACUUM ANALYZE contacts');
    await db.query('VACUUM ANALYZE emails');
    await db.query('VACUUM ANALYZE events');
    await db.query('VACUUM ANALYZE email_engagements');

    const params: unknown[] = [p.id];
    const predicate = compileCondition(campaignFilter(campaignId, 'notOpened') as SegmentCondition, 'c', params, { projectParam: '$1' });
    const sql = `SELECT count(*)::int AS n FROM contacts c WHERE c.project_id = $1 AND ${predicate}`;
    const plan = await db.transaction(async (tx) => {
      await tx.query('SET LOCAL jit = off');
      const [{ n }] = await tx.query<{ n: number }[]>(sql, params);
      // Delivered (98,000: n % 50 <> 0) less opened by a person (28,000: n % 10 < 3 and n % 50 <> 0).
      expect(n).toBe(70_000);
      const [row] = await tx.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
      return row['QUERY PLAN'][0].Plan;
    });
    const scans = planNodes(plan).filter((node) => node['Relation Name'] !== undefined);
    const seqScans = scans.filter((node) => node['Node Type'] === 'Seq Scan').map((node) => node['Relation Name']);
    expect(seqScans.filter((table) => ['emails', 'events', 'email_engagements'].includes(table!))).toEqual([]);
    // emails: the campaign's range of its (campaign, contact) index, not a walk of the whole index.
    expect(scans.find((node) => node['Relation Name'] === 'emails')).toMatchObject({
      'Index Name': 'emails_campaign_recipient_v2_uq',
      'Index Cond': expect.stringContaining('campaign_id ='),
    });
  }, 300_000);

  describe('the rules, unit by unit', () => {
    const list = new UserAgentList(MACHINE_USER_AGENTS);

    it('user agents: listed entries anywhere in any letter case, ^entries at the start only, browsers never', () => {
      expect(list.matches(SCANNER)).toBe(true);
      expect(list.matches('mozilla/5.0 (compatible; bingpreview/1.0b)')).toBe(true);
      expect(list.matches('curl/8.5.0')).toBe(true);
      expect(list.matches('Mozilla/5.0 (X11; Linux) my-curl-like/1.0')).toBe(false);
      for (const browser of [
        BROWSER,
        GMAIL_PROXY,
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0',
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0',
        'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
        'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.71 Mobile Safari/537.36',
        'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17726; Pro)',
        '',
      ]) {
        expect([browser, list.matches(browser)]).toEqual([browser, false]);
      }
    });

    it('user agents: only the first 512 characters are read, so a crafted megabyte header costs what 512 characters cost', () => {
      expect(list.matches(`${'a'.repeat(500)}Slackbot`)).toBe(true);
      expect(list.matches(`${'a'.repeat(600)}Slackbot`)).toBe(false);
      expect(list.matches('Slackbo'.repeat(150_000))).toBe(false);
    });

    const hit = (at: number, kind: 'OPEN' | 'CLICK' = 'CLICK', url: string | null = null): HitToClassify => ({
      emailId: 'e1',
      kind,
      url: kind === 'CLICK' ? (url ?? `https://x.example/${at}`) : null,
      at,
      requestReason: null,
    });

    it('the window: from the hand-off to SMTP (none recorded yet: within it); 0 turns it off; HEAD and user agent win', () => {
      const sentAt = new Map([['e1', 10_000]]);
      const context = { sentAt, priorClicks: [], windowMs: 2000 };
      expect(classifyHits([hit(11_999, 'OPEN'), hit(12_000, 'OPEN')], context)).toEqual(['WINDOW', null]);
      expect(classifyHits([hit(5, 'OPEN')], { ...context, sentAt: new Map([['e1', null]]) })).toEqual(['WINDOW']);
      expect(classifyHits([hit(5, 'OPEN')], { ...context, sentAt: new Map([['e1', null]]), windowMs: 0 })).toEqual([null]);
      expect(classifyHits([{ ...hit(50_000, 'OPEN'), requestReason: 'HEAD' }], context)).toEqual(['HEAD']);
    });

    it('bursts: the third and later distinct links within one second, earlier clicks of the email included; repeats are no new link', () => {
      const context = { sentAt: new Map([['e1', 0]]), priorClicks: [], windowMs: 0 };
      const [a, b, c, d] = ['https://x.example/a', 'https://x.example/b', 'https://x.example/c', 'https://x.example/d'];
      expect(
        classifyHits(
          [hit(100, 'CLICK', a), hit(200, 'CLICK', b), hit(300, 'CLICK', a), hit(400, 'CLICK', c), hit(500, 'CLICK', d)],
          context,
        ),
      ).toEqual([null, null, null, 'BURST', 'BURST']);
      // One second apart or more: no burst.
      expect(classifyHits([hit(0, 'CLICK', a), hit(1000, 'CLICK', b), hit(2000, 'CLICK', c)], context)).toEqual([null, null, null]);
      // Two links clicked in an earlier batch make this one the third.
      const priorClicks = [
        { emailId: 'e1', url: a, at: 9_300 },
        { emailId: 'e1', url: b, at: 9_600 },
      ];
      expect(classifyHits([hit(10_000, 'CLICK', c)], { ...context, priorClicks })).toEqual(['BURST']);
      // Another email's clicks do not count.
      expect(
        classifyHits([hit(10_000, 'CLICK', c)], { ...context, priorClicks: priorClicks.map((p) => ({ ...p, emailId: 'e2' })) }),
      ).toEqual([null]);
    });
  });
});
