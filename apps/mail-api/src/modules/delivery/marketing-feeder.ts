import { randomUUID } from 'node:crypto';
import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { QueueService, REDIS, REDIS_SETTINGS, type RedisSettings } from '@app/service-kit';
import { EMAIL_QUEUE, EmailDeliveryQueue, MailEmailPriority, priorityOf } from './email-delivery.queue.js';
import { MarketingFeedRepository, type BacklogProject, type FedEmail } from './marketing-feed.repository.js';
import { SendingRate } from './sending-rate.js';

/** How often the feeder tops up the queue's marketing backlog. */
export const FEED_INTERVAL_MS = 200;
/** The marketing backlog the queue keeps, in seconds of the rate: enough to never run dry between feeds. */
const BACKLOG_SECONDS = 1.5;
/** Projects served per feed at most (the rest wait for the next; the scan is by project id). */
const MAX_PROJECTS = 1000;
/** The feeder's lease: one feeder runs at a time across the workers; a dead one's lapses this fast. */
const LEASE_MS = 2000;
const MARKETING_PRIORITIES = [MailEmailPriority.Workflow, MailEmailPriority.Campaign];

/** Takes the lease, or renews it when this feeder holds it. */
const LEASE = `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

/**
 * Fair sending among projects (decisions.md "Fair sending and run-time rate"). Campaign and workflow
 * emails wait in Postgres (QUEUED, `fed_at` NULL) instead of going onto the email queue when they are
 * written; every FEED_INTERVAL_MS the feeder tops the queue's marketing backlog up to about
 * BACKLOG_SECONDS of the rate, choosing whose emails go round-robin by project:
 *
 * - Each project has a count of the emails fed for it (Redis hash `served`). Room is given one email
 *   at a time to the project with the lowest count (water-filling), so while k projects have a backlog
 *   each gets rate/k. A project that arrives (or comes back) starts at the lowest count among the
 *   projects waiting now (`vtime`), neither behind the others' history nor with credit for its idle time.
 * - A project's `maxSendRate` caps what is fed for it per second (SendingRate.takeProjectTokens); the
 *   room it cannot use goes to the others.
 *
 * The queue then never holds more than a second or two of marketing mail, so a campaign started later
 * waits for at most that, not for another campaign's backlog window (up to 50,000 emails), and
 * transactional mail (higher priority) overtakes at most the jobs already fetched. A FIFO queue with a
 * deep backlog per campaign could not do this, and BullMQ's per-group fairness is only in its paid
 * edition. The feed is set-based (one UPDATE ... RETURNING for every project, one addBulk); losing Redis
 * loses nothing: unfed emails are still in Postgres, and fed ones whose job was lost get it back from
 * the requeue sweeps. One feeder runs at a time (a Redis lease); a second one would only overfill.
 */
@Injectable()
export class MarketingFeeder implements BeforeApplicationShutdown {
  private readonly logger = new Logger(MarketingFeeder.name);
  private readonly id = randomUUID();
  private readonly keys: { lease: string; served: string; vtime: string };
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly backlog: MarketingFeedRepository,
    private readonly queue: EmailDeliveryQueue,
    private readonly queues: QueueService,
    private readonly rate: SendingRate,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SETTINGS) settings: RedisSettings,
  ) {
    const prefix = `${settings.queuePrefix}:mail:feed`;
    this.keys = { lease: `${prefix}:lease`, served: `${prefix}:served`, vtime: `${prefix}:vtime` };
  }

  /** Starts feeding (where the email queue's worker runs). */
  start(): void {
    this.timer ??= setInterval(() => {
      this.running ??= this.tick().finally(() => (this.running = undefined));
    }, FEED_INTERVAL_MS);
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private async tick(): Promise<void> {
    try {
      if (!(await this.redis.eval(LEASE, 1, this.keys.lease, this.id, String(LEASE_MS)))) return;
      await this.feed();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'feeding marketing emails failed; retrying');
    }
  }

  /** One top-up. Returns how many emails were fed. */
  async feed(): Promise<number> {
    const counts = await this.queues.queue(EMAIL_QUEUE).getCountsPerPriority(MARKETING_PRIORITIES);
    const waiting = Object.values(counts).reduce((sum, n) => sum + n, 0);
    const room = Math.max(2, Math.ceil(this.rate.ratePerSecond * BACKLOG_SECONDS)) - waiting;
    if (room <= 0) return 0;
    const projects = await this.backlog.marketingBacklogProjects(this.dataSource, { limit: MAX_PROJECTS });
    if (projects.length === 0) return 0;
    const scores = await this.scores(projects);
    const shares = await this.share(projects, scores, room);
    const ids = [...shares.keys()];
    const fed = await this.backlog.feedMarketing(this.dataSource, { projectIds: ids, counts: ids.map((id) => shares.get(id)!) });
    await this.queue.enqueue(interleaved(fed, scores).map((e) => ({ id: e.id, projectId: e.projectId, priority: priorityOf(e) })));
    await this.record(projects, scores, fed);
    return fed.length;
  }

  /** Each waiting project's count of fed emails, raised to the lowest among them (`vtime`). */
  private async scores(projects: BacklogProject[]): Promise<Map<string, number>> {
    const [served, vtime] = await Promise.all([
      this.redis.hmget(this.keys.served, ...projects.map((p) => p.projectId)),
      this.redis.get(this.keys.vtime),
    ]);
    const floor = Number(vtime ?? 0);
    return new Map(projects.map((p, i) => [p.projectId, Math.max(Number(served[i] ?? 0), floor)]));
  }

  /**
   * Water-filling: each email of room goes to the project with the lowest score (ties by project id,
   * the next feed serves the others first since their scores are then lower). A capped project takes
   * what its cap allows now; the room it leaves goes round again to the others.
   */
  private async share(projects: BacklogProject[], scores: Map<string, number>, room: number): Promise<Map<string, number>> {
    const shares = new Map<string, number>();
    const open = new Map(projects.map((p) => [p.projectId, p]));
    let left = room;
    while (left > 0 && open.size > 0) {
      const round = fill([...open.keys()], (id) => scores.get(id)! + (shares.get(id) ?? 0), left);
      left = 0;
      for (const [id, n] of round) {
        const cap = open.get(id)!.maxSendRate;
        const granted = cap === null ? n : await this.rate.takeProjectTokens(id, cap, n);
        if (granted > 0) shares.set(id, (shares.get(id) ?? 0) + granted);
        if (granted < n) {
          open.delete(id);
          left += n - granted;
        }
      }
    }
    return shares;
  }

  private async record(projects: BacklogProject[], scores: Map<string, number>, fed: FedEmail[]): Promise<void> {
    const after = new Map(scores);
    for (const e of fed) after.set(e.projectId, after.get(e.projectId)! + 1);
    const vtime = Math.min(...projects.map((p) => after.get(p.projectId)!));
    await this.redis
      .multi()
      .hset(this.keys.served, Object.fromEntries(after))
      .pexpire(this.keys.served, 3_600_000)
      .set(this.keys.vtime, String(vtime), 'PX', 3_600_000)
      .exec();
  }
}

/** `room` emails given one at a time to the id with the lowest `score` (plus what it got so far). */
export function fill(ids: string[], score: (id: string) => number, room: number): Map<string, number> {
  const given = new Map<string, number>();
  const sorted = [...ids].sort();
  for (let i = 0; i < room; i++) {
    let best = sorted[0];
    for (const id of sorted) if (score(id) + (given.get(id) ?? 0) < score(best) + (given.get(best) ?? 0)) best = id;
    given.set(best, (given.get(best) ?? 0) + 1);
  }
  return given;
}

/** The fed emails in queue order: one per project in turn (lowest score first), each project's oldest first. */
export function interleaved(fed: FedEmail[], scores: Map<string, number>): FedEmail[] {
  const byProject = new Map<string, FedEmail[]>();
  for (const e of fed) byProject.set(e.projectId, [...(byProject.get(e.projectId) ?? []), e]);
  for (const list of byProject.values()) list.sort((a, b) => (a.id < b.id ? -1 : 1));
  const order = [...byProject.keys()].sort((a, b) => scores.get(a)! - scores.get(b)! || (a < b ? -1 : 1));
  const out: FedEmail[] = [];
  for (let i = 0; out.length < fed.length; i++) for (const id of order) if (byProject.get(id)![i]) out.push(byProject.get(id)![i]);
  return out;
}
