import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import { Redis } from 'ioredis';
import { Observable, Subject } from 'rxjs';
import { REDIS, REDIS_SETTINGS, type RedisSettings } from '@app/service-kit';
import { EventJournal, JOURNALED_EVENTS, type JournaledEventFilter } from './event-journal.js';
import type { PlatformEvent } from './platform-event.js';

export type EmittedEvent = Omit<PlatformEvent, 'timestamp'> & { timestamp?: number };

/** An event as listeners receive it: with its journal id when it was journaled (the SSE `id:`). */
export type BusEvent = PlatformEvent & { journalId?: string };

/**
 * What travels on the Redis channel: the emitting instance, whether it already delivered the events
 * itself (then it skips its own message), and the journal ids (one per event, '' when not journaled).
 */
interface Envelope {
  origin: string;
  local: boolean;
  events: PlatformEvent[];
  journalIds?: string[];
}

/** How long a new stream waits for the shared subscriber before it starts anyway (Redis away). */
const SUBSCRIBE_WAIT_MS = 2000;

/**
 * The bus modules emit to. Emitting never fails the caller's operation (events tell of something that
 * already happened): listeners on every instance (API replicas, and from the worker to the APIs) get it
 * through one Redis pub/sub channel, prefixed like every key of the
 * deployment. Delivery is at most once and live only: Postgres, not this bus, is the source of truth.
 *
 * An instance subscribes to Redis with ONE connection, opened when its first listener arrives (the
 * worker, which has none, never opens it), and fans the messages out to its local listeners.
 *
 * Events a browser stream may receive are also journaled per tenant (EventJournal) with increasing ids,
 * in the same Redis step as the publish, so a reconnecting stream replays what it missed. Once its
 * subscription is up, an instance takes its own events from the channel too, so every listener on
 * every instance sees a tenant's journaled events in journal order.
 */
@Injectable()
export class EventBus implements OnApplicationShutdown {
  private readonly logger = new Logger(EventBus.name);
  private readonly instanceId = randomUUID();
  private readonly channel: string;
  private readonly local = new Subject<BusEvent>();
  readonly journal: EventJournal;
  private subscriber?: Redis;
  private subscribed?: Promise<void>;
  private subscriberReady = false;
  private listeners = 0;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SETTINGS) private readonly settings: RedisSettings,
    @Optional() @Inject(JOURNALED_EVENTS) journaled?: JournaledEventFilter,
  ) {
    this.channel = `${settings.queuePrefix}:events`;
    this.journal = new EventJournal(redis, settings.queuePrefix, journaled ?? (() => false));
  }

  async emit(event: Omit<PlatformEvent, 'timestamp'> & { timestamp?: number }): Promise<void> {
    await this.emitMany([event]);
  }

  /** Several events in one Redis message (a fan-out chunk emits hundreds at once). */
  async emitMany(events: EmittedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const now = Date.now();
    const stamped = events.map((e) => ({ ...e, recipientUserId: e.recipientUserId ?? null, timestamp: e.timestamp ?? now }));
    // Without a live subscription (none yet, or Redis away) local listeners are served at once.
    const local = !this.subscriberReady;
    if (local) this.deliver(stamped);
    // The journal's script adds `events` and `journalIds` (each event serialized once, there).
    const envelopeHead = JSON.stringify({ origin: this.instanceId, local }).slice(0, -1);
    try {
      await this.journal.appendAndPublish(this.channel, envelopeHead, stamped);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, events: stamped.length }, 'could not publish events to other instances');
      if (!local) this.deliver(stamped);
    }
  }

  /**
   * Every event emitted from now on, on any instance. Unsubscribing releases the listener; the shared
   * Redis subscription stays for the next one.
   */
  stream(): Observable<BusEvent> {
    return new Observable<BusEvent>((subscriber) => {
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
      // Between a drop and the re-subscription, own events are delivered locally again.
      subscriber.on('close', () => (this.subscriberReady = false));
      subscriber.on('message', (_channel: string, message: string) => this.receive(message));
      await subscriber.subscribe(this.channel);
      this.subscriberReady = true;
      subscriber.on(
        'ready',
        () =>
          void subscriber.subscribe(this.channel).then(
            () => (this.subscriberReady = true),
            () => undefined,
          ),
      );
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
    if ((envelope.origin === this.instanceId && envelope.local) || !Array.isArray(envelope.events)) return;
    const ids = Array.isArray(envelope.journalIds) ? envelope.journalIds : [];
    this.deliver(envelope.events.map((event, i) => (ids[i] ? { ...event, journalId: ids[i] } : event)));
  }

  private deliver(events: BusEvent[]): void {
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
