import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import request from 'supertest';
import type { MailProjectCredentials } from '@app/contracts';
import { runMailCli } from '../src/cli/run-mail-cli.js';
import { sendingRateKeys } from '../src/modules/delivery/sending-rate.js';
import { insertVerifiedDomain, waitFor } from './support/delivery-fixtures.js';
import { bearer, createProject } from './support/mail-api-helpers.js';
import type { MailTestApp } from './support/mail-test-app.js';
import { WorkerFleet } from './support/worker-fleet.js';

const DOMAIN = 'fair.example.com';
const RATE = 14;
/** A's campaign: large enough to still have a backlog during all of B's and the rate change (see below). */
const A_SIZE = 500;
const B_SIZE = 140;

/** The most receipts in any 1 s window starting at a receipt, among those in [from, to). */
function busiestSecond(times: number[], from = -Infinity, to = Infinity): number {
  const sorted = times.filter((t) => t >= from && t < to).sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j] < sorted[i] + 1000) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

/**
 * decisions.md "Fair sending and run-time rate" (issue #30) with two real worker processes
 * (`node dist/worker.js`, built by `npm run build -w mail-api`), a real SMTP sink and a private
 * redis-server:
 *
 * - Project A starts a campaign of 500, project B one of 140 a second later. With one FIFO queue B
 *   would wait behind A's whole backlog (500 at 14/s: 36 s before B's first email, 46 s for its last);
 *   round-robin by project gives each about 7/s: B's first email comes after a feed or two of A's, B
 *   has about half the campaign mail until its last, and A still completes. (Timings, with 2,800 and
 *   ten projects, are `npm run bench:delivery`'s.)
 * - Project C's transactional sends during both go out within 2 s of sending at 14/s each (priority
 *   over marketing mail).
 * - `rate:set 5` while A sends: from 2 s after it every second holds at most 5 (+1 on the window's
 *   boundary); `rate:set 14` restores the rate. Every second of the whole run holds at most 14 (+1).
 * - Each recipient gets exactly one email.
 */
describe('fair sending between projects and a run-time rate, across two worker processes', () => {
  let fleet: WorkerFleet;
  let t: MailTestApp;

  beforeAll(async () => {
    fleet = await WorkerFleet.start({
      privateRedis: true,
      env: { MAIL_RATE_PER_SECOND: String(RATE) },
      workerEnv: { MAIL_RATE_PER_SECOND: String(RATE), MAIL_CAMPAIGN_SWEEP_SECONDS: '1', MAIL_TRACKING: 'false' },
    });
    t = fleet.t;
    await fleet.startWorkers(['W1', 'W2']);
  }, 150_000);
  afterAll(() => fleet?.close());

  async function project(name: string, contacts: number): Promise<{ p: MailProjectCredentials; suffix: string }> {
    const p = await createProject(t, name);
    const suffix = `@${p.id.slice(0, 8)}.example.net`;
    await insertVerifiedDomain(fleet.db, p.id, DOMAIN);
    await fleet.db.query(`INSERT INTO contacts (project_id, email) SELECT $1, 'r' || i || $2 FROM generate_series(1, $3) AS i`, [
      p.id,
      suffix,
      contacts,
    ]);
    return { p, suffix };
  }

  async function startCampaign(p: MailProjectCredentials, name: string): Promise<{ id: string; startedAt: number }> {
    const res = await request(t.url)
      .post('/campaigns')
      .set(bearer(p.secretKey))
      .send({ name, subject: 'News {{email}}', body: '<p>Hi</p>', from: `news@${DOMAIN}`, audienceType: 'ALL' })
      .expect(200);
    const startedAt = Date.now();
    await request(t.url).post(`/campaigns/${res.body.data.id}/send`).set(bearer(p.secretKey)).expect(200);
    return { id: res.body.data.id as string, startedAt };
  }

  async function grantTimes(): Promise<number[]> {
    const client = new Redis(fleet.redis!.url);
    const entries = await client.xrange(sendingRateKeys(t.config.queuePrefix).starts, '-', '+').finally(() => client.disconnect());
    return entries.flatMap(([id, fields]) => Array.from({ length: Number(fields[1]) }, () => Number(id.split('-')[0])));
  }

  const receivedBy = (suffix: string) => fleet.sink.messages.filter((m) => m.envelope.to[0].endsWith(suffix));
  const rate = async (...argv: string[]) => {
    const out: string[] = [];
    expect(await runMailCli(argv, t.config, (l) => out.push(l))).toBe(0);
    return JSON.parse(out[0]) as { ratePerSecond: number };
  };

  it('B gets its share beside A, C transactional within 2 s, rate:set 5 then 14 applied, every recipient once', async () => {
    const { sink, db } = fleet;
    const a = await project('A', A_SIZE);
    const b = await project('B', B_SIZE);
    const c = await project('C', 0);
    const campaignA = await startCampaign(a.p, 'A big');
    await new Promise((r) => setTimeout(r, 1000));
    const campaignB = await startCampaign(b.p, 'B small');

    // C sends one transactional email every 1.5 s while B's campaign runs.
    const transactional: { to: string; sentAt: number }[] = [];
    let bDone = false;
    const cLoop = (async () => {
      for (let i = 0; !bDone; i++) {
        const to = `urgent${i}${c.suffix}`;
        const sentAt = Date.now();
        await request(t.url)
          .post('/v1/send')
          .set(bearer(c.p.secretKey))
          .send({ to, from: `alerts@${DOMAIN}`, subject: 'Code', body: '<p>123</p>' })
          .expect(200);
        transactional.push({ to, sentAt });
        await new Promise((r) => setTimeout(r, 1500));
      }
    })();
    await sink.waitForMessages(() => receivedBy(b.suffix).length >= B_SIZE, 60_000);
    bDone = true;
    await cLoop;
    const bLast = Math.max(...receivedBy(b.suffix).map((m) => m.receivedAt));
    // Round-robin: once B's emails exist, B's first goes out after only a feed or two of A's (a FIFO
    // queue puts A's whole remaining backlog first), and from then until B's last, B had about half of
    // the campaign mail (7/s of 14). Counted from the moment B's emails were queued (the database's
    // clock), not from the request: on a loaded machine B's planning takes seconds, while A sends on.
    const [{ bQueuedAt }] = await db.query<{ bQueuedAt: number }[]>(
      `SELECT (extract(epoch FROM min(queued_at)) * 1000)::float8 AS "bQueuedAt" FROM emails WHERE campaign_id = $1`,
      [campaignB.id],
    );
    const bFirst = Math.min(...receivedBy(b.suffix).map((m) => m.receivedAt));
    const aBeforeBQueued = receivedBy(a.suffix).filter((m) => m.receivedAt < bQueuedAt).length;
    // A's remaining backlog then was large, so FIFO would put well over 100 of A's before B's first.
    expect(aBeforeBQueued).toBeLessThan(A_SIZE - 200);
    expect(receivedBy(a.suffix).filter((m) => m.receivedAt >= bQueuedAt && m.receivedAt < bFirst).length).toBeLessThan(100);
    const aBeside = receivedBy(a.suffix).filter((m) => m.receivedAt >= bFirst && m.receivedAt <= bLast).length;
    expect(B_SIZE / (B_SIZE + aBeside)).toBeGreaterThanOrEqual(0.4);
    // A still has a backlog: it was not starved, and goes on at the full rate below. B's 140 within
    // 25 s of its start on an idle machine is measured by `npm run bench:delivery` (fair-sending.json):
    // here the workers share two cores with the test and other suites, so the clock is no property.
    expect(receivedBy(a.suffix).length).toBeLessThan(A_SIZE - 100);

    await sink.waitForMessages(() => transactional.every((m) => receivedBy(c.suffix).some((r) => r.envelope.to[0] === m.to)), 10_000);
    expect(transactional.length).toBeGreaterThanOrEqual(8);
    for (const m of transactional) {
      const receipt = receivedBy(c.suffix).find((r) => r.envelope.to[0] === m.to)!;
      // Within 2 s at 14/s: it overtakes the queued campaign mail, and waits for at most 2 s of sending
      // (28 emails) that had already started. Counted in emails rather than ms: the workers share two
      // busy cores with this test (the 2 s on an idle machine: bench/results/fair-sending.json).
      const overtaken = [a, b]
        .flatMap((x) => receivedBy(x.suffix))
        .filter((r) => r.receivedAt > m.sentAt && r.receivedAt < receipt.receivedAt);
      expect({ to: m.to, sentBefore: overtaken.length }).toEqual({ to: m.to, sentBefore: expect.any(Number) });
      expect(overtaken.length).toBeLessThanOrEqual(2 * RATE);
    }

    expect(await rate('rate:set', '5')).toEqual({ ratePerSecond: 5 });
    const loweredAt = Date.now();
    await new Promise((r) => setTimeout(r, 6000));
    expect(await rate('rate:set', String(RATE))).toEqual({ ratePerSecond: RATE });
    const restoredAt = Date.now();

    await waitFor(
      async () =>
        (await request(t.url).get(`/campaigns/${campaignA.id}`).set(bearer(a.p.secretKey))).body.data.status === 'SENT' ? true : null,
      60_000,
      "A's campaign to be SENT",
    );
    // The starts the gate granted, on Redis' clock (its log of grants). Not the sink's receipt times:
    // this busy test process (API, sink, jest) stalls now and then and its receipts come out bunched,
    // which is no property of the workers (the same reason delivery-workers.spec reads BullMQ's events).
    const starts = await grantTimes();
    expect(starts.length).toBeGreaterThanOrEqual(A_SIZE + B_SIZE);
    expect(busiestSecond(starts)).toBeLessThanOrEqual(RATE + 1);
    expect(busiestSecond(starts, loweredAt + 2000, restoredAt)).toBeLessThanOrEqual(5 + 1);
    expect(busiestSecond(starts, restoredAt + 2000)).toBeGreaterThan(5 + 1);

    for (const [who, size] of [
      [a, A_SIZE],
      [b, B_SIZE],
    ] as const) {
      const addresses = receivedBy(who.suffix).map((m) => m.envelope.to[0]);
      expect(addresses).toHaveLength(size);
      expect(new Set(addresses).size).toBe(size);
    }
    const rows = await db.query<{ campaign_id: string; status: string; n: number }[]>(
      `SELECT campaign_id, status, count(*)::int AS n FROM emails WHERE campaign_id = ANY($1) GROUP BY 1, 2 ORDER BY n`,
      [[campaignA.id, campaignB.id]],
    );
    expect(rows).toEqual([
      { campaign_id: campaignB.id, status: 'SENT', n: B_SIZE },
      { campaign_id: campaignA.id, status: 'SENT', n: A_SIZE },
    ]);
  }, 120_000);
});
