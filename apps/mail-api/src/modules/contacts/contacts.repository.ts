import { Injectable } from '@nestjs/common';
import type { ContactDataPrimitive, MailContact } from '@app/contracts';
import { execute, isoTimestamp, likePattern, queryPrepared, SqlWhere, type Db } from '@app/service-kit';
import { keysetPage } from '../../core/database/keyset-page.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import type { ContactDataPatch } from './contact-data.js';

/** A contact's columns, qualified by `alias` when given; timestamps come back as the API's ISO text. */
export function contactColumns(alias?: string): string {
  const c = alias ? `${alias}.` : '';
  return `${c}id, ${c}email, ${c}subscribed, ${c}data, ${isoTimestamp(`${c}created_at`)} AS created_at, ${isoTimestamp(`${c}updated_at`)} AS updated_at`;
}

const CONTACT_COLUMNS = contactColumns();

export interface ContactRow {
  id: string;
  email: string;
  subscribed: boolean;
  data: Record<string, ContactDataPrimitive>;
  /** ISO 8601, UTC (`isoTimestamp`). */
  created_at: string;
  updated_at: string;
}

export function toContact(row: ContactRow): MailContact {
  return {
    id: row.id,
    email: row.email,
    subscribed: row.subscribed,
    data: row.data,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * The contact upsert, one statement, safe under concurrency: the unique index on
 * (project_id, lower(email)) makes racing inserts of one email meet in ON CONFLICT, where the loser
 * updates the winner's row (its current version, locked). `data` merges in SQL: set keys overwrite
 * (`||`), null keys are removed (`-`).
 * Parameters: $1 project, $2 email, $3 subscribed (null: true for a new contact, unchanged otherwise),
 * $4 keys to set (jsonb), $5 keys to remove (text[]). `source` is the row to insert (track inserts it
 * only when needed). `addOnlyData`, a jsonb expression: keys added only where the contact has none
 * (what a public key may do, decisions.md "Workflow and tracking safety").
 */
export function upsertContactSql(
  source = 'VALUES ($1::uuid, $2::text, coalesce($3::boolean, true), $4::jsonb)',
  options: { addOnlyData?: string } = {},
): string {
  const existing = options.addOnlyData ? `(${options.addOnlyData} || contacts.data)` : 'contacts.data';
  return `
  INSERT INTO contacts (project_id, email, subscribed, data)
  ${source}
  ON CONFLICT (project_id, (lower(email))) DO UPDATE
    SET subscribed = coalesce($3::boolean, contacts.subscribed),
        data = (${existing} || $4::jsonb) - $5::text[],
        updated_at = now()`;
}

/** The project's contacts: the sum of its counter shards (see the ContactCounts migration). */
const projectContactCount = (project: string) => `SELECT coalesce(sum(contacts), 0)::int FROM contact_counts WHERE project_id = ${project}`;

export interface ContactChange {
  email: string;
  /** Undefined: true for a new contact, unchanged for an existing one. */
  subscribed?: boolean;
  patch: ContactDataPatch;
}

export interface ContactListFilter {
  limit: number;
  /** Keyset: only contacts older than this id (pages run newest first). */
  beforeId?: string;
  subscribed?: boolean;
  search?: string;
}

/**
 * The one writer of `contacts`: the contacts API, and every other feature that creates or changes a
 * contact (send's recipients, unsubscribe links) goes through these methods, passing its transaction.
 * The single exception is /v1/track, whose one statement (track.repository.ts, which says why) upserts
 * the contact with `upsertContactSql` and records the event. Every statement is scoped to one project.
 * Named prepared statements: the contact pages and send are hot paths, and the texts are fixed.
 */
@Injectable()
export class ContactsRepository {
  async upsert(db: Db, scope: ProjectScope, input: ContactChange): Promise<{ row: ContactRow; inserted: boolean }> {
    const [row] = await queryPrepared<ContactRow & { inserted: boolean }>(
      db,
      `${upsertContactSql()} RETURNING ${CONTACT_COLUMNS}, (xmax = 0) AS inserted`,
      [scope.projectId, input.email, input.subscribed ?? null, JSON.stringify(input.patch.set), input.patch.unset],
    );
    const { inserted, ...contact } = row;
    return { row: contact, inserted };
  }

  /**
   * One page (limit + 1 rows, newest first) and the exact total matching the filters. Without a
   * filter the total is the project's maintained count (contact_counts, kept by triggers in every
   * writer's transaction: migration 1763930000000-ContactCounts), not a count of its contacts on every
   * page; with `subscribed` or `search` it counts the matching rows (through the indexes).
   */
  list(db: Db, scope: ProjectScope, filter: ContactListFilter): Promise<{ rows: ContactRow[]; total: number }> {
    const where = new SqlWhere().add('project_id = ?', scope.projectId);
    if (filter.subscribed !== undefined) where.add('subscribed = ?', filter.subscribed);
    // The expression matches the trigram index contacts_email_trgm_idx.
    if (filter.search) where.add('lower(email) LIKE ?', likePattern(filter.search.toLowerCase()));
    const unfiltered = filter.subscribed === undefined && !filter.search;
    const totalFrom = unfiltered ? (param: (value: unknown) => string) => projectContactCount(param(scope.projectId)) : undefined;
    const page = { filter: where, beforeId: filter.beforeId, limit: filter.limit, totalFrom };
    return keysetPage<ContactRow>(db, { select: CONTACT_COLUMNS, from: 'contacts', idColumn: 'id', ...page });
  }

  async findById(db: Db, scope: ProjectScope, id: string): Promise<ContactRow | null> {
    const [row] = await queryPrepared<ContactRow>(db, `SELECT ${CONTACT_COLUMNS} FROM contacts WHERE project_id = $1 AND id = $2`, [
      scope.projectId,
      id,
    ]);
    return row ?? null;
  }

  async update(
    db: Db,
    scope: ProjectScope,
    input: { id: string; subscribed?: boolean; patch: ContactDataPatch },
  ): Promise<ContactRow | null> {
    const [row] = await queryPrepared<ContactRow>(
      db,
      `UPDATE contacts
          SET subscribed = coalesce($3::boolean, subscribed),
              data = (data || $4::jsonb) - $5::text[],
              updated_at = now()
        WHERE project_id = $1 AND id = $2
        RETURNING ${CONTACT_COLUMNS}`,
      [scope.projectId, input.id, input.subscribed ?? null, JSON.stringify(input.patch.set), input.patch.unset],
    );
    return row ?? null;
  }

  /** Deletes the contact and, by cascade, its events. Returns whether there was one. */
  async delete(db: Db, scope: ProjectScope, id: string): Promise<boolean> {
    const rows = await queryPrepared(db, `DELETE FROM contacts WHERE project_id = $1 AND id = $2 RETURNING id`, [scope.projectId, id]);
    return rows.length > 0;
  }

  /**
   * POST /v1/send: one contact per recipient, created (`subscribed` as given, else false: a
   * transactional send is no opt-in) or found; existing contacts change only when `subscribed` is
   * given. Rows are taken in email order so concurrent sends to overlapping lists cannot deadlock.
   * Returns ids by lower-cased email.
   */
  async upsertRecipients(
    tx: Db,
    scope: ProjectScope,
    input: { emails: string[]; subscribed: boolean | null },
  ): Promise<Map<string, string>> {
    const rows = await queryPrepared<{ id: string; email: string }>(
      tx,
      `INSERT INTO contacts (project_id, email, subscribed)
       SELECT $1, e.email, coalesce($3::boolean, false) FROM unnest($2::text[]) AS e(email) ORDER BY lower(e.email)
       ON CONFLICT (project_id, (lower(email))) DO UPDATE
         SET subscribed = coalesce($3::boolean, contacts.subscribed),
             updated_at = CASE WHEN $3::boolean IS NULL THEN contacts.updated_at ELSE now() END
       RETURNING id, lower(email) AS email`,
      [scope.projectId, input.emails, input.subscribed],
    );
    return new Map(rows.map((r) => [r.email, r.id]));
  }

  /**
   * Static segment members (POST /segments/{id}/members): creates the contacts of these emails that
   * the project does not have yet, unsubscribed (being put on a list is no opt-in); existing contacts are
   * not touched at all. Rows are taken in email order so concurrent calls cannot deadlock. Returns how
   * many were created.
   */
  insertMissingUnsubscribed(tx: Db, scope: ProjectScope, input: { emails: string[] }): Promise<number> {
    return execute(
      tx,
      `INSERT INTO contacts (project_id, email, subscribed)
       SELECT $1, e.email, false FROM unnest($2::text[]) AS e(email) ORDER BY lower(e.email)
       ON CONFLICT (project_id, (lower(email))) DO NOTHING`,
      [scope.projectId, input.emails],
    );
  }

  /**
   * An unsubscribe link: `subscribed` becomes false. `AND subscribed` keeps a repeat from touching
   * the row; a deleted contact changes nothing.
   */
  async unsubscribe(db: Db, scope: ProjectScope, contactId: string): Promise<void> {
    await queryPrepared(db, `UPDATE contacts SET subscribed = false, updated_at = now() WHERE project_id = $1 AND id = $2 AND subscribed`, [
      scope.projectId,
      contactId,
    ]);
  }
}
