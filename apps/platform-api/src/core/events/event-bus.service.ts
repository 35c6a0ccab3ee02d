import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { Observable, Subject } from 'rxjs';
import { REDIS, REDIS_SETTINGS, type RedisSettings } from '@app/service-kit';
import type { PlatformEvent } from './platform-event.js';

export type EmittedEvent = Omit<PlatformEvent, 'timestamp'> & { timestamp?: number };

/** What travels on the Redis channel: the emitting instance, so it skips its own messages. */
interface Envelope {
  origin: string;
  events: PlatformEvent[];
}

/** How long a new stream waits for the shared subscriber before it starts anyway (Redis away). */
const SUBSCRIBE_WAIT_MS = 2000;

/**
 * The bus modules emit to. Emitting never fails the caller's operation (events tell of something that
 * already happened): listeners on this instance get the event at once, other instances (API replicas,
 * and from the worker to the APIs) through one Redis pub/sub channel, prefixed like every key of the
 * deployment. Delivery is at most once and live only: Postgres, not this bus, is the source of truth.
 *
 * An instance subscribes to Redis with ONE connection, opened when its first listener arrives (the
 * worker, which has none, never opens it), and fans the messages out to its local listeners.
 */
@Injectable()
export class EventBus implements OnApplicationShutdown {
  private readonly logger = new Logger(EventBus.name);
  private readonly instanceId = randomUUID();
  private readonly channel: string;
  private readonly local = new Subject<PlatformEvent>();
  private subscriber?: Redis;
  private subscribed?: Promise<void>;
  private listeners = 0;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SETTINGS) private readonly settings: RedisSettings,
  ) {
    this.channel = `${settings.queuePrefix}:events`;
  }

  async emit(event: Omit<PlatformEvent, 'timestamp'> & { timestamp?: number }): Promise<void> {
    await this.emitMany([event]);
  }

  /** Several events in one Redis message (a fan-out chunk emits hundreds at once). */
  async emitMany(events: EmittedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const now = Date.now();
    const stamped = events.map((e) => ({ ...e, recipientUserId: e.recipientUserId ?? null, timestamp: e.timestamp ?? now }));
    this.deliver(stamped);
    const envelope: Envelope = { origin: this.instanceId, events: stamped };
    try {
      await this.redis.publish(this.channel, JSON.stringify(envelope));
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, events: stamped.length }, 'could not publish events to other instances');
    }
  }

  /**
   * Every event emitted from now on, on any instance. Unsubscribing releases the listener; the shared
   * Redis subscription stays for the next one.
   */
  stream(): Observable<PlatformEvent> {
    return new Observable<PlatformEvent>((subscriber) => {
      this.listeners += 1;
      void this.connectSubscriber();
      const subscription = this.local.subscribe(subscriber);
      return () => {
        this.listeners -= 1;
        subscription.unsubscribe();
      };
    });
  }

  /** Resolves once events of other instances reach this one (or after a bounded wait if Redis is away). */
  async ready(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SUBSCRIBE_WAIT_MS);
      timer.unref();
    });
    await Promise.race([this.connectSubscriber(), timeout]);
    clearTimeout(timer);
  }

  /** Local listeners (open event streams) of this instance. */
  get listenerCount(): number {
    return this.listeners;
  }

  onApplicationShutdown(): void {
    this.local.complete();
    this.subscriber?.disconnect();
  }

  private connectSubscriber(): Promise<void> {
    this.subscribed ??= (async () => {
      // maxRetriesPerRequest null: SUBSCRIBE waits for a connection; ioredis re-subscribes after reconnects.
      const subscriber = new Redis(this.settings.url, { maxRetriesPerRequest: null });
      this.subscriber = subscriber;
      subscriber.on('error', () => undefined);
      subscriber.on('message', (_channel: string, message: string) => this.receive(message));
      await subscriber.subscribe(this.channel);
    })().catch((err: Error) => {
      this.logger.warn({ err: err.message }, 'event subscriber failed; streams get this instance’s events only');
    });
    return this.subscribed;
  }

  private receive(message: string): void {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(message) as Envelope;
    } catch {
      return;
    }
    if (envelope.origin === this.instanceId || !Array.isArray(envelope.events)) return;
    this.deliver(envelope.events);
  }

  private deliver(events: PlatformEvent[]): void {
    if (this.listeners === 0) return;
    for (const event of events) {
      try {
        this.local.next(event);
      } catch (err) {
        this.logger.error({ err: (err as Error).message, event: event.id }, 'event listener failed');
      }
    }
  }
}
