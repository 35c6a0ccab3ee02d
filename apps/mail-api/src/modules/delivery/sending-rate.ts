import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { Worker } from 'bullmq';
import { REDIS, REDIS_SETTINGS, type RedisSettings } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { isSpacedRate, sendingLimiter } from './email-queue-options.js';

/** How often each worker reads the rate to re-pace its BullMQ limiter (the gate applies a change at once). */
export const RATE_WATCH_MS = 1000;

/**
 * GCRA (the "virtual scheduling" leaky bucket) on Redis' own clock: `tat` (theoretical arrival time,
 * microseconds) is when the next start is due. Up to ARGV[2] starts are taken while tat - now stays
 * within the tolerance; each pushes tat by one interval T = 1 s / rate, so the long-run rate is never
 * above `rate`. The tolerance of T/2 lets a start come up to half an interval early: the waiters wake a
 * few ms late (timers, the other waiters' calls), and without it each late start would be time lost
 * for good (measured: 12.2/s of 14 with 64 waiters). Any window of W ms then holds at most
 * floor((W + T/2) / T) + 1 starts: for 1 s, `rate` + 1 (the slot boundary the existing specs allow).
 * KEYS[1]: the rate set by `rate:set` (absent: ARGV[1], the process' MAIL_RATE_PER_SECOND), or ''
 * for the fixed rate ARGV[1]; KEYS[2]: tat. ARGV[3]: '1' = tolerate a second's burst.
 * KEYS[3]: a stream that logs each grant on Redis' clock (its entry ids), or ''.
 * Returns {taken, ms to wait when none was taken, the rate in force}.
 */
const TAKE = `
local rate = nil
if KEYS[1] ~= '' then
  rate = tonumber(redis.call('GET', KEYS[1])) or tonumber(ARGV[1])
else
  rate = tonumber(ARGV[1])
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = 1000000 / rate
local tolerance = interval / 2
if ARGV[3] == '1' then tolerance = 1000000 - interval end
local tat = tonumber(redis.call('GET', KEYS[2]) or '0')
if tat < now then tat = now end
local want = tonumber(ARGV[2])
local taken = 0
while taken < want and tat - now <= tolerance do
  tat = tat + interval
  taken = taken + 1
end
if taken == 0 then
  return {0, math.ceil((tat - now - tolerance) / 1000), rate}
end
redis.call('SET', KEYS[2], string.format('%.0f', tat), 'PX', 60000)
if KEYS[3] ~= '' then redis.call('XADD', KEYS[3], 'MAXLEN', '~', '2000', '*', 'n', taken, 'rate', rate) end
return {taken, 0, rate}
`;

/**
 * The deployment's sending rate, changeable at run time (decisions.md "Fair sending and run-time rate").
 *
 * The rate is a Redis key (`npm run mail -- rate:set <n>`); until it is set (and again after Redis lost
 * it) MAIL_RATE_PER_SECOND applies. Two parts enforce it:
 *
 * - The gate (`admit`): one Lua call per email, just before the SMTP hand-off, reads the rate and takes
 *   a start on a GCRA schedule kept in Redis with Redis' clock. Every worker shares the one schedule, and
 *   the rate is read in the same atomic step, so the bound holds across N workers at every moment,
 *   including the moment of a change (a start is admitted at the rate in force when it is taken; any 1 s
 *   window holds at most max(old, new) + 1 starts).
 * - The pacer: BullMQ's limiter on the email queue, re-set by every worker from the key each second,
 *   so workers fetch jobs at about the rate instead of holding many fetched jobs waiting at the gate
 *   (a transactional job enqueued later would wait behind them). BullMQ reads the limiter from the
 *   worker's options on each fetch; its max alone could not change without re-creating the workers.
 */
@Injectable()
export class SendingRate implements OnApplicationShutdown {
  private readonly logger = new Logger(SendingRate.name);
  private readonly keys: ReturnType<typeof sendingRateKeys>;
  private watch?: NodeJS.Timeout;
  private current: number;
  private readonly waiters: { priority: number; resolve: () => void }[] = [];
  private pumping = false;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SETTINGS) settings: RedisSettings,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {
    this.keys = sendingRateKeys(settings.queuePrefix);
    this.current = config.ratePerSecond;
  }

  onApplicationShutdown(): void {
    clearInterval(this.watch);
  }

  /** The rate in force (as last read by this process). */
  get ratePerSecond(): number {
    return this.current;
  }

  /**
   * Waits until this process may start one SMTP hand-off under the deployment's rate. The process'
   * waiters queue here (lower `priority` first, then in arrival order) and one loop takes starts for
   * them: a herd of waiters each polling Redis would make the starts late (measured: 12.8/s of 14 with
   * 64 waiters polling), and a transactional email must not wait behind marketing mail fetched before it.
   */
  admit(priority = 0): Promise<void> {
    return new Promise((resolve) => {
      const at = this.waiters.findIndex((w) => w.priority > priority);
      this.waiters.splice(at < 0 ? this.waiters.length : at, 0, { priority, resolve });
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.waiters.length > 0) {
        let waitMs: number;
        try {
          const burst = !isSpacedRate(this.current);
          const took = await this.take(this.keys.rate, this.keys.gate, this.config.ratePerSecond, this.waiters.length, burst);
          for (const w of this.waiters.splice(0, took.taken)) w.resolve();
          waitMs = took.taken > 0 ? 0 : Math.max(1, took.waitMs);
        } catch (err) {
          // Without Redis nothing is sent unthrottled: the waiters wait for it (BullMQ needs it too).
          this.logger.warn({ err: (err as Error).message }, 'the sending rate gate is unreachable; waiting');
          waitMs = 500;
        }
        if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    } finally {
      this.pumping = false;
    }
  }

  /**
   * Up to `count` feed tokens of a project capped at `maxSendRate` per second (a second's burst
   * tolerated: the feeder tops up a few times a second). Returns how many were granted.
   */
  async takeProjectTokens(projectId: string, maxSendRate: number, count: number): Promise<number> {
    if (count <= 0) return 0;
    return (await this.take('', this.keys.cap(projectId), maxSendRate, count, true)).taken;
  }

  /** Re-paces `worker`'s limiter whenever the rate key changes (every RATE_WATCH_MS). */
  watchRate(worker: Worker): void {
    if (this.watch) return;
    const apply = async () => {
      try {
        const rate = await readRate(this.redis, this.keys.rate, this.config.ratePerSecond);
        if (rate === this.current && worker.opts.limiter) return;
        this.current = rate;
        worker.opts.limiter = sendingLimiter(rate);
        this.logger.log({ ratePerSecond: rate }, 'sending rate applied');
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'reading the sending rate failed; keeping the last one');
      }
    };
    void apply();
    this.watch = setInterval(() => void apply(), RATE_WATCH_MS);
    this.watch.unref();
  }

  private async take(rateKey: string, tatKey: string, rate: number, count: number, burst: boolean) {
    const [taken, waitMs, inForce] = (await this.redis.eval(
      TAKE,
      3,
      rateKey,
      tatKey,
      rateKey ? this.keys.starts : '',
      String(rate),
      String(count),
      burst ? '1' : '0',
    )) as [number, number, number];
    if (rateKey) this.current = Number(inForce);
    return { taken, waitMs };
  }
}

/** The Redis keys of the rate and its schedules, under the deployment's key prefix. */
export function sendingRateKeys(prefix: string) {
  return {
    rate: `${prefix}:mail:send-rate`,
    gate: `${prefix}:mail:send-gate`,
    /** The last ~2,000 grants of the gate (entry ids: Redis' time in ms): what an operator checks the rate against. */
    starts: `${prefix}:mail:send-starts`,
    cap: (projectId: string) => `${prefix}:mail:feed-cap:${projectId}`,
  };
}

/** The rate in the key, or `fallback` when it was never set (or Redis lost it). */
export async function readRate(redis: Redis, key: string, fallback: number): Promise<number> {
  const value = Number(await redis.get(key));
  return Number.isInteger(value) && value >= 1 ? value : fallback;
}
