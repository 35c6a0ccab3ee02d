import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Counter } from 'prom-client';
import { MetricsRegistry, REDIS } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';

/** The longest pause, however often the relay throttles. */
export const MAX_THROTTLE_PAUSE_MS = 60_000;
/** A throttle within this long after the previous pause ended counts as a repeat (the pause doubles). */
const REPEAT_WINDOW_MS = 60_000;
/** How long a worker trusts its last read of the pause (every worker reads it before each hand-off to SMTP). */
const READ_CACHE_MS = 50;

/**
 * Relay throttling (decisions.md "Deliverability"): a reply 421 or 454, or one whose text says the
 * sending rate was exceeded or that throttling applies (Amazon SES: `454 Throttling failure: Maximum
 * sending rate exceeded`). Neither a bounce nor a failure. Bounded input (an SMTP reply line), no
 * nested quantifiers.
 */
export function isThrottling(err: unknown): boolean {
  const { responseCode, response } = (err ?? {}) as { responseCode?: unknown; response?: unknown };
  if (responseCode === 421 || responseCode === 454) return true;
  if (typeof responseCode !== 'number') return false;
  const text = typeof response === 'string' ? response.slice(0, 1000) : '';
  return /throttl|rate exceeded|sending rate|rate limit/i.test(text);
}

/** A send held back at the gate before MAIL FROM: the relay pause began while it waited. Nothing was sent. */
export class RelayPausedError extends Error {
  constructor() {
    super('relay paused: the message was not handed over');
    this.name = 'RelayPausedError';
  }
}

/**
 * Atomically starts a pause unless one is running: `<until ms>:<length ms>` in one key every worker
 * reads. A throttle within REPEAT_WINDOW_MS of the end of the previous pause doubles the length (at
 * most the max); a quiet minute starts again from the base. Answers {until, length, started}.
 */
const PAUSE_SCRIPT = `
local now = tonumber(ARGV[1])
local base = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local untilMs, length = 0, 0
local v = redis.call('GET', KEYS[1])
if v then
  local sep = string.find(v, ':', 1, true)
  untilMs = tonumber(string.sub(v, 1, sep - 1))
  length = tonumber(string.sub(v, sep + 1))
end
if untilMs > now then return {untilMs, length, 0} end
local nextLength = base
if length > 0 and now - untilMs < window then nextLength = math.min(length * 2, max) end
local nextUntil = now + nextLength
redis.call('SET', KEYS[1], nextUntil .. ':' .. nextLength, 'PX', nextLength + window)
return {nextUntil, nextLength, 1}
`;

/**
 * The deployment-wide sending pause of relay throttling, shared by every worker through one Redis key
 * (`<QUEUE_PREFIX>:mail:relay-pause`). A worker reads it before it hands an email to SMTP (cached for
 * READ_CACHE_MS, one read in flight at a time) and a worker whose send was throttled starts (or
 * doubles) it. Each pause is logged and counted (`mail_relay_throttle_pauses_total`,
 * `mail_relay_throttle_pause_seconds_total`).
 */
@Injectable()
export class RelayThrottle {
  private readonly logger = new Logger(RelayThrottle.name);
  private readonly key: string;
  private readonly pauses: Counter | null;
  private readonly pauseSeconds: Counter | null;
  private known = { untilMs: 0, readAt: 0 };
  private reading: Promise<number> | null = null;
  /** Throttling replies this process has seen whose pause Redis has not answered yet (`throttled`). */
  private awaitingPause = 0;
  private lastSeenAt = 0;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
    @Optional() metrics?: MetricsRegistry,
  ) {
    this.key = `${config.queuePrefix}:mail:relay-pause`;
    const registers = metrics ? [metrics.registry] : null;
    this.pauses = registers
      ? new Counter({
          name: 'mail_relay_throttle_pauses_total',
          help: 'Deployment-wide sending pauses started because the relay throttled',
          registers,
        })
      : null;
    this.pauseSeconds = registers
      ? new Counter({ name: 'mail_relay_throttle_pause_seconds_total', help: 'Length of the sending pauses started (seconds)', registers })
      : null;
  }

  /** The end of the running pause (epoch ms), or 0 when sending may go on. */
  async pausedUntil(): Promise<number> {
    const now = Date.now();
    if (now - this.known.readAt < READ_CACHE_MS) return this.known.untilMs > now ? this.known.untilMs : 0;
    this.reading ??= this.read().finally(() => (this.reading = null));
    const untilMs = await this.reading;
    return untilMs > Date.now() ? untilMs : 0;
  }

  /**
   * The gate right before an SMTP transaction starts (MailTransport calls it synchronously before MAIL
   * FROM is written): closed while the last known pause runs, and from the moment this process saw a
   * throttling reply (`seen`) until Redis answered that pause's length (`throttled`), so no transaction
   * of this process starts after a throttle was seen. Other workers close theirs within READ_CACHE_MS
   * of the pause being stored (their next read).
   */
  mayStartTransaction(): boolean {
    const now = Date.now();
    if (this.awaitingPause > 0 && now - this.lastSeenAt < MAX_THROTTLE_PAUSE_MS) return false;
    return this.known.untilMs <= now;
  }

  /** A throttling reply surfaced (synchronously, where the transport first sees it): close the gate now. */
  seen(): void {
    this.awaitingPause += 1;
    this.lastSeenAt = Date.now();
  }

  /**
   * The relay throttled a send: start the pause (or find the running one). Answers its end (epoch ms).
   * Ends one `seen`: its gate closure is replaced by the pause Redis answered (or, Redis failing, a
   * local pause of the base length).
   */
  async throttled(reply: string): Promise<number> {
    const base = this.config.deliverability.throttleBackoffMs;
    let answer: [number, number, number];
    try {
      answer = (await this.redis.eval(PAUSE_SCRIPT, 1, this.key, Date.now(), base, MAX_THROTTLE_PAUSE_MS, REPEAT_WINDOW_MS)) as [
        number,
        number,
        number,
      ];
    } catch (err) {
      this.known = { untilMs: Math.max(this.known.untilMs, Date.now() + base), readAt: this.known.readAt };
      throw err;
    } finally {
      this.awaitingPause = Math.max(0, this.awaitingPause - 1);
    }
    const [untilMs, length, started] = answer;
    this.known = { untilMs: Math.max(untilMs, this.known.untilMs), readAt: Date.now() };
    if (started === 1) {
      this.pauses?.inc();
      this.pauseSeconds?.inc(length / 1000);
      this.logger.warn({ pauseMs: length, reply: reply.slice(0, 200) }, 'relay throttled: every worker pauses sending');
    }
    return untilMs;
  }

  private async read(): Promise<number> {
    const value = await this.redis.get(this.key);
    const read = value ? Number(value.slice(0, value.indexOf(':'))) : 0;
    // A pause this process started while the read was in flight is newer than what the read saw: a
    // pause is never shortened, so the later end wins.
    const untilMs = Math.max(read, this.known.untilMs);
    this.known = { untilMs, readAt: Date.now() };
    return untilMs;
  }
}
