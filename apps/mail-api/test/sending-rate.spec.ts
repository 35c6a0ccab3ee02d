import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { MailConfig } from '../src/config/mail-config.js';
import { SendingRate, sendingRateKeys } from '../src/modules/delivery/sending-rate.js';
import { fill, interleaved } from '../src/modules/delivery/marketing-feeder.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The most starts any 1 s window (sliding, from each start) holds. */
function busiestSecond(times: number[], from = -Infinity, to = Infinity): number {
  const sorted = times.filter((t) => t >= from && t < to).sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[j] <= sorted[i] - 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/**
 * The run-time sending rate's gate (SendingRate.admit) on the real Redis, with one connection per
 * simulated worker: the bound holds across them, and a `rate:set` applies to the next start of every
 * worker at once (the rate is read in the same Lua step that takes the start).
 */
describe('SendingRate: one deployment-wide rate across workers, changeable at run time', () => {
  const prefix = `fair-${randomUUID().slice(0, 8)}`;
  const clients: Redis[] = [];
  let admin: Redis;
  beforeAll(() => {
    admin = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    admin.disconnect();
    for (const c of clients) c.disconnect();
  });

  function worker(ratePerSecond: number, queuePrefix = prefix): SendingRate {
    const redis = new Redis(REDIS_URL);
    clients.push(redis);
    return new SendingRate(redis, { url: REDIS_URL, queuePrefix }, { ratePerSecond } as MailConfig);
  }

  /**
   * The starts granted under `queuePrefix`, on Redis' clock (the gate's log of grants): this busy test
   * process resolves its waiters late and bunched now and then, which is no property of the gate.
   */
  async function grants(queuePrefix: string): Promise<number[]> {
    const entries = await admin.xrange(sendingRateKeys(queuePrefix).starts, '-', '+');
    return entries.flatMap(([id, fields]) => Array.from({ length: Number(fields[1]) }, () => Number(id.split('-')[0])));
  }

  /** Each of `gates` starts as fast as admit lets it (8 concurrent sends each) until `ms` passed. */
  async function run(gates: SendingRate[], ms: number, during?: () => Promise<void>): Promise<number[]> {
    const times: number[] = [];
    const end = Date.now() + ms;
    const loop = async (gate: SendingRate) => {
      while (Date.now() < end) {
        await gate.admit();
        times.push(Date.now());
      }
    };
    await Promise.all([...gates.flatMap((g) => Array.from({ length: 8 }, () => loop(g))), during?.()]);
    return times;
  }

  it('three workers together start at most rate (+1 on a window boundary) in every second, and do reach it', async () => {
    const own = `${prefix}-three`;
    const local = await run([worker(10, own), worker(10, own), worker(10, own)], 2500);
    const times = await grants(own);
    expect(times).toHaveLength(local.length);
    expect(busiestSecond(times)).toBeLessThanOrEqual(11);
    // At the rate, not far below it: 2.5 s at 10/s (the last loops may overrun the end by a start).
    expect(times.length).toBeGreaterThanOrEqual(22);
  }, 20_000);

  it('rate:set 3 mid-run: from the change on every second holds at most 3 (+1); setting it back restores 10', async () => {
    const own = `${prefix}-change`;
    const gates = [worker(10, own), worker(10, own)];
    let changedAt = 0;
    let restoredAt = 0;
    await run(gates, 4500, async () => {
      await new Promise((r) => setTimeout(r, 1200));
      await admin.set(sendingRateKeys(own).rate, '3');
      changedAt = Date.now();
      await new Promise((r) => setTimeout(r, 2000));
      await admin.set(sendingRateKeys(own).rate, '10');
      restoredAt = Date.now();
    });
    const times = await grants(own);
    // Every window, including the ones straddling a change, holds at most the higher rate (+1).
    expect(busiestSecond(times)).toBeLessThanOrEqual(11);
    // A start taken after the change is spaced at the new rate at once (the in-flight Lua call may end
    // one start of the old schedule, hence +1 on top of the window boundary's).
    expect(busiestSecond(times, changedAt, restoredAt)).toBeLessThanOrEqual(5);
    expect(times.filter((t) => t >= restoredAt).length).toBeGreaterThan(busiestSecond(times, changedAt, restoredAt));
    expect(gates[0].ratePerSecond).toBe(10);
  }, 20_000);

  it("a project's cap: feed tokens at most maxSendRate per second on average (a second's burst), per project", async () => {
    const gate = worker(14);
    const a = randomUUID();
    const b = randomUUID();
    expect(await gate.takeProjectTokens(a, 2, 10)).toBe(2);
    expect(await gate.takeProjectTokens(a, 2, 10)).toBe(0);
    // Another project's cap is its own.
    expect(await gate.takeProjectTokens(b, 5, 3)).toBe(3);
    await new Promise((r) => setTimeout(r, 600));
    expect(await gate.takeProjectTokens(a, 2, 10)).toBe(1);
  });
});

describe('MarketingFeeder share arithmetic', () => {
  it('gives room one email at a time to the least served project (water-filling), ties by id', () => {
    const scores = new Map([
      ['a', 10],
      ['b', 10],
      ['c', 4],
    ]);
    expect(Object.fromEntries(fill(['a', 'b', 'c'], (id) => scores.get(id)!, 12))).toEqual({ a: 2, b: 2, c: 8 });
    expect(Object.fromEntries(fill(['b', 'a'], () => 0, 3))).toEqual({ a: 2, b: 1 });
  });

  it('queues the fed emails one project at a time, the least served project first', () => {
    const fed = ['a1', 'a2', 'a3', 'b1', 'c1', 'c2'].map((id) => ({ id, projectId: id[0], campaignId: 'x', workflowId: null }));
    const order = interleaved(
      fed,
      new Map([
        ['a', 5],
        ['b', 3],
        ['c', 4],
      ]),
    ).map((e) => e.id);
    expect(order).toEqual(['b1', 'c1', 'a1', 'c2', 'a2', 'a3']);
  });
});
