import { Injectable } from '@nestjs/common';
import type { ContactDataPrimitive, MailContact } from '@app/contracts';
import { likePattern, SqlWhere } from '@app/service-kit';
import { keysetPage } from '../../core/database/keyset-page.js';
import { Sql } from '../../core/database/sql.service.js';
import type { ContactDataPatch } from './contact-data.js';

export const CONTACT_COLUMNS = 'id, email, subscribed, data, created_at, updated_at';

export interface ContactRow {
  id: string;
  email: string;
  subscribed: boolean;
  data: Record<string, ContactDataPrimitive>;
  created_at: Date;
  updated_at: Date;
}

export function toContact(row: ContactRow): MailContact {
  return {
    id: row.id,
    email: row.email,
    subscribed: row.subscribed,
    data: row.data,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/**
 * The contact upsert, one statement, safe under concurrency: the unique index on
 * (project_id, lower(email)) makes racing inserts of one email meet in ON CONFLICT, where the loser
 * updates the winner's row. `data` merges in SQL: set keys overwrite (`||`), null keys are removed (`-`).
 * Parameters: $1 project, $2 email, $3 subscribed (null: true for a new contact, unchanged otherwise),
 * $4 keys to set (jsonb), $5 keys to remove (text[]). `source` is the row to insert (track inserts it
 * only when needed).
 */
export function upsertContactSql(source = 'VALUES ($1::uuid, $2::text, coalesce($3::boolean, true), $4::jsonb)'): string {
  return `
  INSERT INTO contacts (project_id, email, subscribed, data)
  ${source}
  ON CONFLICT (project_id, (lower(email))) DO UPDATE
    SET subscribed = coalesce($3::boolean, contacts.subscribed),
        data = (contacts.data || $4::jsonb) - $5::text[],
        updated_at = now()`;
}

export interface ContactListFilter {
  limit: number;
  /** Keyset: only contacts older than this id (pages run newest first). */
  beforeId?: string;
  subscribed?: boolean;
  search?: string;
}

@Injectable()
export class ContactsRepository {
  constructor(private readonly sql: Sql) {}

  async upsert(
    projectId: string,
    email: string,
    subscribed: boolean | undefined,
    patch: ContactDataPatch,
  ): Promise<{ row: ContactRow; inserted: boolean }> {
    const [row] = await this.sql.query<ContactRow & { inserted: boolean }>(
      `${upsertContactSql()} RETURNING ${CONTACT_COLUMNS}, (xmax = 0) AS inserted`,
      [projectId, email, subscribed ?? null, JSON.stringify(patch.set), patch.unset],
    );
    const { inserted, ...contact } = row;
    return { row: contact, inserted };
  }

  /** One page (limit + 1 rows, newest first) and the total matching the filters. */
  list(projectId: string, filter: ContactListFilter): Promise<{ rows: ContactRow[]; total: number }> {
    const where = new SqlWhere().add('project_id = ?', projectId);
    if (filter.subscribed !== undefined) where.add('subscribed = ?', filter.subscribed);
    // The expression matches the trigram index contacts_email_trgm_idx.
    if (filter.search) where.add('lower(email) LIKE ?', likePattern(filter.search.toLowerCase()));
    const page = { filter: where, beforeId: filter.beforeId, limit: filter.limit };
    return keysetPage<ContactRow>(this.sql, { select: CONTACT_COLUMNS, from: 'contacts', idColumn: 'id', ...page });
  }

  async findById(projectId: string, id: string): Promise<ContactRow | null> {
    const [row] = await this.sql.query<ContactRow>(`SELECT ${CONTACT_COLUMNS} FROM contacts WHERE project_id = $1 AND id = $2`, [
      projectId,
      id,
    ]);
    return row ?? null;
  }

  async update(projectId: string, id: string, subscribed: boolean | undefined, patch: ContactDataPatch): Promise<ContactRow | null> {
    const [row] = await this.sql.query<ContactRow>(
      `UPDATE contacts
          SET subscribed = coalesce($3::boolean, subscribed),
              data = (data || $4::jsonb) - $5::text[],
              updated_at = now()
        WHERE project_id = $1 AND id = $2
        RETURNING ${CONTACT_COLUMNS}`,
      [projectId, id, subscribed ?? null, JSON.stringify(patch.set), patch.unset],
    );
    return row ?? null;
  }

  /** Deletes the contact and, by cascade, its events. Returns whether there was one. */
  async delete(projectId: string, id: string): Promise<boolean> {
    const rows = await this.sql.query(`DELETE FROM contacts WHERE project_id = $1 AND id = $2 RETURNING id`, [projectId, id]);
    return rows.length > 0;
  }
}
