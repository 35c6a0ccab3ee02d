import { BeforeApplicationShutdown, Injectable, Logger, OnModuleDestroy, OnModuleInit, StreamableFile } from '@nestjs/common';
import { ErrorCode } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import { AccessCacheService, type RevocationNotice } from '../../core/auth/access-cache.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { EventBus, type BusEvent } from '../../core/events/event-bus.service.js';
import { journalIdAfter, type JournalReplay } from '../../core/events/event-journal.js';
import type { PlatformEvent } from '../../core/events/platform-event.js';
import { SseStream } from '../../core/events/sse-stream.js';
import { DeclaredEventsService } from './declared-events.service.js';

export const HEARTBEAT_INTERVAL_MS = 30_000;
/** Open streams per user on one instance; the next one is 429 (a browser needs one per tab at most). */
export const MAX_STREAMS_PER_USER = 5;
/** How long shutdown waits for ended streams to be flushed to their clients. */
const SHUTDOWN_DRAIN_MS = 2000;

/**
 * GET /events/stream (decisions.md "Events"): `: connected` first, `: heartbeat` every 30 s, then one
 * `data: {"id", "payload", "timestamp", "organizationId"}` frame per `clientBroadcast` event of the
 * caller's tenant (events naming a recipient only to that user), from any instance. When the client
 * goes, its listener and heartbeat timer go with it.
 *
 * Every journaled event carries an `id:`; a client reconnecting with `Last-Event-ID` (the header an
 * EventSource sends, or `?lastEventId=`) first gets the events it missed, in order, then the live ones,
 * each once. A gap the journal no longer covers (older than 5 minutes, more than 1,000 events of the
 * tenant since, or an unknown id) gets one `event: reset` instead, and the client reloads its state.
 *
 * A stream lives only as long as the session that opened it: when the session ends (logout, password
 * change or reset, user deletion, tenant deactivation) on any instance, the stream ends. At most
 * MAX_STREAMS_PER_USER streams per user are open on one instance.
 */
@Injectable()
export class EventStreamService implements BeforeApplicationShutdown, OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(EventStreamService.name);
  /** Between heartbeats (tests shorten it). */
  heartbeatIntervalMs = HEARTBEAT_INTERVAL_MS;
  private readonly streams = new Map<SseStream, StreamOwner>();
  private readonly perUser = new Map<string, number>();
  private stopListening?: () => void;

  constructor(
    private readonly bus: EventBus,
    private readonly declared: DeclaredEventsService,
    private readonly access: AccessCacheService,
  ) {}

  onModuleInit(): void {
    this.stopListening = this.access.onRevocation((notice) => this.revoke(notice));
  }

  onModuleDestroy(): void {
    this.stopListening?.();
  }

  async open(auth: AuthContext, lastEventId?: string): Promise<StreamableFile> {
    // Subscribed to the other instances before `: connected`, so no event after it is missed.
    await this.bus.ready();
    // Counted and reserved with no await in between, so concurrent opens cannot pass the cap together.
    if ((this.perUser.get(auth.userId) ?? 0) >= MAX_STREAMS_PER_USER) {
      throw new DomainError(ErrorCode.RateLimitExceeded, 'too many open event streams');
    }
    const stream = new SseStream();
    stream.comment('connected');
    // Live events wait while the journal is read, then only those after the replayed ones go out.
    let held: BusEvent[] | null = lastEventId ? [] : null;
    let lastSent = lastEventId ?? '';
    const send = (event: BusEvent) => {
      if (!this.visibleTo(event, auth)) return;
      if (event.journalId) {
        if (lastSent && !journalIdAfter(event.journalId, lastSent)) return;
        lastSent = event.journalId;
      }
      stream.data(
        { id: event.id, payload: event.payload, timestamp: event.timestamp, organizationId: event.organizationId },
        event.journalId,
      );
    };
    const subscription = this.bus.stream().subscribe({
      next: (event) => (held ? held.push(event) : send(event)),
      complete: () => stream.finish(),
    });
    const heartbeat = setInterval(() => stream.comment('heartbeat'), this.heartbeatIntervalMs);
    heartbeat.unref();
    this.streams.set(stream, { userId: auth.userId, tenantId: auth.tenantId, sessionId: auth.sessionId });
    this.perUser.set(auth.userId, (this.perUser.get(auth.userId) ?? 0) + 1);
    stream.onClose(() => {
      clearInterval(heartbeat);
      subscription.unsubscribe();
      this.streams.delete(stream);
      const left = (this.perUser.get(auth.userId) ?? 1) - 1;
      if (left > 0) this.perUser.set(auth.userId, left);
      else this.perUser.delete(auth.userId);
    });
    if (lastEventId) {
      const replay = await this.replay(auth.tenantId, lastEventId);
      if (replay.kind === 'reset') {
        stream.event('reset', {}, replay.latestId ?? undefined);
        lastSent = replay.latestId ?? '';
      } else replay.events.forEach(send);
      const live = held ?? [];
      held = null;
      live.forEach(send);
    }
    return stream.toResponse();
  }

  private async replay(tenantId: string, lastEventId: string): Promise<JournalReplay> {
    try {
      return await this.bus.journal.since(tenantId, lastEventId);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not read the event journal; the stream starts with a reset');
      return { kind: 'reset', latestId: null };
    }
  }

  /** Open streams of this instance. */
  get openStreams(): number {
    return this.streams.size;
  }

  /** Open streams of one user on this instance. */
  openStreamsOf(userId: string): number {
    return this.perUser.get(userId) ?? 0;
  }

  /**
   * Shutdown ends every stream before the HTTP server closes (it waits for open responses); clients
   * reconnect, to another instance.
   */
  async beforeApplicationShutdown(): Promise<void> {
    const closed = [...this.streams.keys()].map((stream) => new Promise<void>((resolve) => stream.onClose(resolve)));
    for (const stream of this.streams.keys()) stream.finish();
    // Once the responses are complete, the server's close drops their (then idle) connections at once.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closed), new Promise((resolve) => (timer = setTimeout(resolve, SHUTDOWN_DRAIN_MS)))]);
    clearTimeout(timer);
  }

  /**
   * Ends the streams a revocation concerns. Ended sessions and tenants are known outright; for a user
   * change (or messages missed during a Redis reconnect) each concerned stream's session is checked.
   */
  private revoke(notice: RevocationNotice): void {
    for (const [stream, owner] of this.streams) {
      if (notice.type === 'session' && notice.sessionIds.includes(owner.sessionId)) stream.finish();
      else if (notice.type === 'tenant' && notice.tenantId === owner.tenantId) stream.finish();
      else if ((notice.type === 'user' && notice.userId === owner.userId) || notice.type === 'unknown') void this.recheck(stream, owner);
    }
  }

  private async recheck(stream: SseStream, owner: StreamOwner): Promise<void> {
    try {
      const session = await this.access.liveSession(owner.sessionId);
      if (!session || session.userId !== owner.userId) stream.finish();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not recheck an event stream’s session; it stays open');
    }
  }

  private visibleTo(event: PlatformEvent, auth: AuthContext): boolean {
    if (event.tenantId !== auth.tenantId || !this.declared.isClientBroadcast(event.id)) return false;
    return !event.recipientUserId || event.recipientUserId === auth.userId;
  }
}

interface StreamOwner {
  userId: string;
  tenantId: string;
  sessionId: string;
}
