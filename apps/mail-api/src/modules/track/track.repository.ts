import { Injectable } from '@nestjs/common';
import type { ContactDataPrimitive } from '@app/contracts';
import { query, queryPrepared, type Db } from '@app/service-kit';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { upsertContactSql } from '../contacts/contacts.repository.js';

/*
 * The one exception to "one writer per table" (CONTRIBUTING.md "Data access"), kept on purpose.
 *
 * `contacts` belongs to ContactsRepository, and nothing else writes it but the two statements below;
 * `events` is written only here. POST /v1/track upserts the contact and records its event in ONE
 * statement (one round trip, one implicit transaction), and TrackBatcher puts concurrent calls into
 * one such statement. Split along the rule (ContactsRepository upserting the contacts, then an events
 * insert, in a transaction opened by the batcher), a new contact's track measured 1167 req/s against
 * 1465 for this form (bench/run.mjs, issue #12): 20% slower, although the split's run had the faster
 * machine (GET /healthz 11770 against 4127 req/s). The contact half is `upsertContactSql`, the contacts
 * repository's own upsert, so the merge rules stay in one place.
 */
/**
 * POST /v1/track in one statement (so one transaction and one round trip): upsert the contact, then
 * insert the event for it. When the contact exists and the call changes nothing on it (no persistent
 * data that differs, no new `subscribed`, no key to add that it lacks), it is not written at all: a hot
 * contact tracked by many clients at once is then only read (and key-share locked by the event's foreign
 * key), never updated under a row lock that would queue them. Otherwise the shared upsert runs (see
 * upsertContactSql); a public key's change only adds keys ($8) and sets the flag of a contact it creates
 * ($9), which the upsert applies to the row's current version, so no concurrent call can turn it into an
 * overwrite. Parameters $1..$5 as there, $6 event name, $7 event data, $8 keys to add (jsonb), $9 the flag
 * of a new contact when $3 is null (null: true).
 */
const TRACK_SQL = `
  WITH unchanged AS (
    SELECT id FROM contacts
     WHERE project_id = $1::uuid AND lower(email) = lower($2::text)
       AND ($3::boolean IS NULL OR subscribed = $3::boolean)
       AND (($8::jsonb || data) || $4::jsonb) - $5::text[] = data
  ),
  upserted AS (
    ${upsertContactSql(
      `SELECT $1::uuid, $2::text, coalesce($3::boolean, $9::boolean, true), $8::jsonb || $4::jsonb WHERE NOT EXISTS (SELECT 1 FROM unchanged)`,
      { addOnlyData: '$8::jsonb' },
    )}
    RETURNING id
  ),
  contact AS (SELECT id FROM unchanged UNION ALL SELECT id FROM upserted),
  event AS (
    INSERT INTO events (project_id, contact_id, name, data)
    SELECT $1::uuid, id, $6::text, $7::jsonb FROM contact
    RETURNING id, contact_id, created_at
  )
  SELECT id, contact_id, created_at FROM event`;

/**
 * Many tracks in one statement (TrackBatcher coalesces concurrent calls): the same steps as TRACK_SQL,
 * set-based, with the same rules (a public key's keys only added, its flag only on a contact it creates).
 * One row per contact ("group": the calls for one email, their changes merged in order) and one row per
 * event. Contacts are upserted in (project, email) order, so concurrent batches lock rows in the same
 * order and cannot deadlock. Event ids are made before the insert so each call gets its own back (`ord`).
 * Parameters: groups $1 project ids, $2 emails, $3 subscribed (null: unchanged), $4 keys to set, $5 keys
 * to remove (jsonb arrays), $9 keys to add, $10 the flag of a new contact when $3 is null (null: true);
 * events $6 group (1-based), $7 names, $8 data.
 */
const TRACK_BATCH_SQL = `
  WITH grp AS (
    SELECT g.ord, g.project_id, g.email, g.subscribed, g.subscribed_if_new, g.set_data, g.add_data,
           ARRAY(SELECT jsonb_array_elements_text(g.unset_keys)) AS unset_keys
      FROM unnest($1::uuid[], $2::text[], $3::boolean[], $4::jsonb[], $5::jsonb[], $9::jsonb[], $10::boolean[])
           WITH ORDINALITY AS g(project_id, email, subscribed, set_data, unset_keys, add_data, subscribed_if_new, ord)
  ),
  unchanged AS (
    SELECT grp.ord, c.id
      FROM grp JOIN contacts c ON c.project_id = grp.project_id AND lower(c.email) = lower(grp.email)
     WHERE (grp.subscribed IS NULL OR c.subscribed = grp.subscribed)
       AND ((grp.add_data || c.data) || grp.set_data) - grp.unset_keys = c.data
  ),
  upserted AS (
    INSERT INTO contacts AS c (project_id, email, subscribed, data)
    SELECT project_id, email, coalesce(subscribed, subscribed_if_new, true), add_data || set_data FROM grp
     WHERE ord NOT IN (SELECT ord FROM unchanged)
     ORDER BY project_id, lower(email)
    ON CONFLICT (project_id, (lower(email))) DO UPDATE
      SET subscribed = coalesce(
            (SELECT g.subscribed FROM grp g WHERE g.project_id = c.project_id AND lower(g.email) = lower(c.email)),
            c.subscribed),
          data = (SELECT ((g.add_data || c.data) || g.set_data) - g.unset_keys
                    FROM grp g WHERE g.project_id = c.project_id AND lower(g.email) = lower(c.email)),
          updated_at = now()
    RETURNING c.id, c.project_id, lower(c.email) AS email_key
  ),
  contact AS (
    SELECT ord, id FROM unchanged
    UNION ALL
    SELECT grp.ord, u.id FROM upserted u JOIN grp ON grp.project_id = u.project_id AND lower(grp.email) = u.email_key
  ),
  ev AS (
    SELECT e.ord, uuid_generate_v7() AS id, grp.project_id, contact.id AS contact_id, e.name, e.data
      FROM unnest($6::int[], $7::text[], $8::jsonb[]) WITH ORDINALITY AS e(grp_ord, name, data, ord)
      JOIN grp ON grp.ord = e.grp_ord
      JOIN contact ON contact.ord = e.grp_ord
  ),
  inserted AS (
    INSERT INTO events (id, project_id, contact_id, name, data)
    SELECT id, project_id, contact_id, name, data FROM ev
    RETURNING id, created_at
  )
  SELECT ev.id, ev.contact_id, inserted.created_at FROM ev JOIN inserted ON inserted.id = ev.id ORDER BY ev.ord`;

/**
 * What tracking changes on one contact: one call's change, or the merged change of a batch's calls for
 * one email (track-batcher.ts, `applyTrackCall`). The secret key sets, deletes and sets the flag; the
 * public key only adds keys the contact lacks and gives the flag of a contact it creates.
 */
export interface TrackContactChange {
  /** Applied to a new or existing contact (secret key); null: unchanged. */
  subscribed: boolean | null;
  /** The flag of a contact this change creates, when `subscribed` is null (null: true). */
  subscribedIfNew: boolean | null;
  /** Keys set, overwriting. */
  set: Record<string, ContactDataPrimitive>;
  /** Keys added only where the contact has none (never in `set` or `unset`). */
  add: Record<string, ContactDataPrimitive>;
  /** Keys deleted. */
  unset: string[];
}

/** One contact of a batch: the merged change of every call for its email. */
export interface TrackGroup extends TrackContactChange {
  projectId: string;
  email: string;
}

/** One event of a batch, for the group at index `group`. */
export interface TrackBatchEvent {
  group: number;
  name: string;
  data: Record<string, ContactDataPrimitive>;
}

/** Set-based insert of system events ($1 project, $2 contact ids, $3 names, $4 data), contacts of the project only. */
const INSERT_SYSTEM_EVENTS_SQL = `
  INSERT INTO events (project_id, contact_id, name, data)
  SELECT $1::uuid, e.contact_id, e.name, e.data
    FROM unnest($2::uuid[], $3::text[], $4::jsonb[]) WITH ORDINALITY AS e(contact_id, name, data, ord)
    JOIN contacts c ON c.id = e.contact_id AND c.project_id = $1::uuid
   ORDER BY e.ord
  RETURNING id, contact_id, name, data, created_at`;

export interface SystemEventRow {
  id: string;
  contact_id: string;
  name: string;
  data: Record<string, unknown>;
  created_at: Date;
}

export interface TrackedRow {
  id: string;
  contact_id: string;
  created_at: Date;
}

@Injectable()
export class TrackRepository {
  /** One call (or one email's merged calls). */
  async track(
    db: Db,
    scope: ProjectScope,
    input: { email: string; change: TrackContactChange; eventName: string; eventData: Record<string, ContactDataPrimitive> },
  ): Promise<TrackedRow> {
    const { change } = input;
    const [row] = await queryPrepared<TrackedRow>(db, TRACK_SQL, [
      scope.projectId,
      input.email,
      change.subscribed,
      JSON.stringify(change.set),
      change.unset,
      input.eventName,
      JSON.stringify(input.eventData),
      JSON.stringify(change.add),
      change.subscribedIfNew,
    ]);
    return row;
  }

  /**
   * The service's own events (`email.sent`, `email.opened`, ...: reserved names that /v1/track refuses),
   * many in one statement. Only for contacts of `scope`'s project: a row naming another project's contact
   * is skipped, never written. Rows of deleted contacts are skipped too. Returns the inserted events.
   */
  insertSystemEvents(
    db: Db,
    scope: ProjectScope,
    rows: readonly { contactId: string; name: string; data: Record<string, unknown> }[],
  ): Promise<SystemEventRow[]> {
    if (rows.length === 0) return Promise.resolve([]);
    return query<SystemEventRow>(db, INSERT_SYSTEM_EVENTS_SQL, [
      scope.projectId,
      rows.map((r) => r.contactId),
      rows.map((r) => r.name),
      rows.map((r) => JSON.stringify(r.data)),
    ]);
  }

  /**
   * Concurrent calls, of any project, in one statement: each group carries its project (its scope),
   * and every contact and event row of the statement is matched on it. Rows in the order of `events`.
   */
  trackBatch(db: Db, input: { groups: TrackGroup[]; events: TrackBatchEvent[] }): Promise<TrackedRow[]> {
    const { groups, events } = input;
    return queryPrepared<TrackedRow>(db, TRACK_BATCH_SQL, [
      groups.map((g) => g.projectId),
      groups.map((g) => g.email),
      groups.map((g) => g.subscribed),
      groups.map((g) => JSON.stringify(g.set)),
      groups.map((g) => JSON.stringify(g.unset)),
      events.map((e) => e.group + 1),
      events.map((e) => e.name),
      events.map((e) => JSON.stringify(e.data)),
      groups.map((g) => JSON.stringify(g.add)),
      groups.map((g) => g.subscribedIfNew),
    ]);
  }
}
