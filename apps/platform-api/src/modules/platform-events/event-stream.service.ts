import { BeforeApplicationShutdown, Injectable, StreamableFile } from '@nestjs/common';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { EventBus } from '../../core/events/event-bus.service.js';
import type { PlatformEvent } from '../../core/events/platform-event.js';
import { SseStream } from '../../core/events/sse-stream.js';
import { DeclaredEventsService } from './declared-events.service.js';

export const HEARTBEAT_INTERVAL_MS = 30_000;
/** How long shutdown waits for ended streams to be flushed to their clients. */
const SHUTDOWN_DRAIN_MS = 2000;

/**
 * GET /events/stream (decisions.md "Events"): `: connected` first, `: heartbeat` every 30 s, then one
 * `data: {"id", "payload", "timestamp", "organizationId"}` frame per `clientBroadcast` event of the
 * caller's tenant (events naming a recipient only to that user), from any instance. When the client
 * goes, its listener and heartbeat timer go with it.
 */
@Injectable()
export class EventStreamService implements BeforeApplicationShutdown {
  /** Between heartbeats (tests shorten it). */
  heartbeatIntervalMs = HEARTBEAT_INTERVAL_MS;
  private readonly streams = new Set<SseStream>();

  constructor(
    private readonly bus: EventBus,
    private readonly declared: DeclaredEventsService,
  ) {}

  async open(auth: AuthContext): Promise<StreamableFile> {
    // Subscribed to the other instances before `: connected`, so no event after it is missed.
    await this.bus.ready();
    const stream = new SseStream();
    stream.comment('connected');
    const subscription = this.bus.stream().subscribe({
      next: (event) => {
        if (this.visibleTo(event, auth)) {
          stream.data({ id: event.id, payload: event.payload, timestamp: event.timestamp, organizationId: event.organizationId });
        }
      },
      complete: () => stream.finish(),
    });
    const heartbeat = setInterval(() => stream.comment('heartbeat'), this.heartbeatIntervalMs);
    heartbeat.unref();
    this.streams.add(stream);
    stream.onClose(() => {
      clearInterval(heartbeat);
      subscription.unsubscribe();
      this.streams.delete(stream);
    });
    return stream.toResponse();
  }

  /** Open streams of this instance. */
  get openStreams(): number {
    return this.streams.size;
  }

  /**
   * Shutdown ends every stream before the HTTP server closes (it waits for open responses); clients
   * reconnect, to another instance.
   */
  async beforeApplicationShutdown(): Promise<void> {
    const closed = [...this.streams].map((stream) => new Promise<void>((resolve) => stream.onClose(resolve)));
    for (const stream of this.streams) stream.finish();
    // Once the responses are complete, the server's close drops their (then idle) connections at once.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closed), new Promise((resolve) => (timer = setTimeout(resolve, SHUTDOWN_DRAIN_MS)))]);
    clearTimeout(timer);
  }

  private visibleTo(event: PlatformEvent, auth: AuthContext): boolean {
    if (event.tenantId !== auth.tenantId || !this.declared.isClientBroadcast(event.id)) return false;
    return !event.recipientUserId || event.recipientUserId === auth.userId;
  }
}
