import type { Redis } from 'ioredis';
import type { PlatformEvent } from './platform-event.js';

/** How far back a reconnecting stream is replayed (decisions.md "Events": 5 minutes or 1,000 events per tenant). */
export const JOURNAL_MAX_AGE_MS = 5 * 60_000;
export const JOURNAL_MAX_EVENTS = 1000;

/** Which events the journal keeps (the ones a browser stream can receive); given by the app that boots the bus. */
export type JournaledEventFilter = (eventId: string) => boolean;
export const JOURNALED_EVENTS = Symbol('JOURNALED_EVENTS');

/** What a reconnecting stream gets: the events after its last id, in order, or a reset (gap too old, or unknown id). */
export type JournalReplay = { kind: 'events'; events: JournaledEvent[] } | { kind: 'reset'; latestId: string | null };
export type JournaledEvent = PlatformEvent & { journalId: string };

/**
 * Appends the journaled events of one emit (one Redis stream per tenant, trimmed to JOURNAL_MAX_EVENTS,
 * expiring JOURNAL_MAX_AGE_MS after its last entry) and publishes the envelope carrying the events and
 * their stream ids, in one script: Redis runs scripts one at a time, so the ids every instance receives
 * increase in the order the channel delivers them, across all emitting instances. The envelope's
 * `events` array is put together here from the same JSON texts the journal stores: each event is
 * serialized and sent once (a fan-out chunk of 1,000 notifications sent every event twice before).
 * KEYS: channel, then one stream key per event ('' for events not journaled).
 * ARGV: envelope JSON without its closing brace, max events (kept: one more, see `since`), ttl ms, then one event JSON per event.
 */
const APPEND_AND_PUBLISH = `
local ids = {}
local bodies = {}
local streams = {}
for i = 2, #KEYS do
  bodies[#bodies + 1] = ARGV[i + 2]
  if KEYS[i] == '' then
    ids[#ids + 1] = '""'
  else
    local id = redis.call('XADD', KEYS[i], 'MAXLEN', '=', ARGV[2] + 1, '*', 'e', ARGV[i + 2])
    streams[KEYS[i]] = true
    ids[#ids + 1] = '"' .. id .. '"'
  end
end
for key in pairs(streams) do redis.call('PEXPIRE', key, ARGV[3]) end
redis.call('PUBLISH', KEYS[1], ARGV[1] .. ',"events":[' .. table.concat(bodies, ',') .. '],"journalIds":[' .. table.concat(ids, ',') .. ']}')
return #ids
`;

/** Stream ids are `<ms>-<seq>`; compared as numbers. */
export function parseJournalId(id: string): [number, number] | null {
  const match = /^(\d{1,15})-(\d{1,15})$/.exec(id);
  return match ? [Number(match[1]), Number(match[2])] : null;
}

export function journalIdAfter(a: string, b: string): boolean {
  const x = parseJournalId(a);
  const y = parseJournalId(b);
  if (!x || !y) return false;
  return x[0] > y[0] || (x[0] === y[0] && x[1] > y[1]);
}

/** The per-tenant replay log of the event bus (Redis streams; losing them only costs a `reset`). */
export class EventJournal {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly journaled: JournaledEventFilter,
  ) {}

  keyOf(tenantId: string): string {
    return `${this.prefix}:events:journal:${tenantId}`;
  }

  /**
   * Journals what should be and publishes the envelope: `envelopeHead` (its other fields, without the closing
   * brace) with `events` and `journalIds` (one per event, '' when not journaled) added by the script.
   */
  async appendAndPublish(channel: string, envelopeHead: string, events: PlatformEvent[]): Promise<void> {
    const keys = events.map((e) => (e.tenantId && this.journaled(e.id) ? this.keyOf(e.tenantId) : ''));
    const bodies = events.map((e) => JSON.stringify(e));
    await this.redis.eval(
      APPEND_AND_PUBLISH,
      keys.length + 1,
      channel,
      ...keys,
      envelopeHead,
      String(JOURNAL_MAX_EVENTS),
      String(JOURNAL_MAX_AGE_MS),
      ...bodies,
    );
  }

  /**
   * The tenant's events after `lastId`. The journal keeps one entry more than JOURNAL_MAX_EVENTS, and a
   * resume needs the client's last entry still in it: then nothing between was trimmed. Otherwise
   * (trimmed, expired, lost with Redis, older than JOURNAL_MAX_AGE_MS, or not an id of ours) a reset.
   */
  async since(tenantId: string, lastId: string, now = Date.now()): Promise<JournalReplay> {
    const key = this.keyOf(tenantId);
    const last = parseJournalId(lastId);
    if (!last || last[0] < now - JOURNAL_MAX_AGE_MS) return { kind: 'reset', latestId: await this.latestId(key) };
    const entries = (await this.redis.xrange(key, lastId, '+', 'COUNT', JOURNAL_MAX_EVENTS + 1)) as [string, string[]][];
    if (entries[0]?.[0] !== lastId) return { kind: 'reset', latestId: await this.latestId(key) };
    return {
      kind: 'events',
      events: entries.slice(1).map(([journalId, fields]) => ({ ...(JSON.parse(fields[1]) as PlatformEvent), journalId })),
    };
  }

  private async latestId(key: string): Promise<string | null> {
    const newest = (await this.redis.xrevrange(key, '+', '-', 'COUNT', 1)) as [string, string[]][];
    return newest[0]?.[0] ?? null;
  }
}
