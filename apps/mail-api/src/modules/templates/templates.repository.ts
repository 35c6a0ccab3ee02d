import { Injectable } from '@nestjs/common';
import type { MailTemplate, MailTemplateType } from '@app/contracts';
import { likePattern, SqlWhere } from '@app/service-kit';
import { keysetPage } from '../../core/database/keyset-page.js';
import { Sql } from '../../core/database/sql.service.js';

const TEMPLATE_COLUMNS = 'id, name, description, subject, body, from_email, from_name, reply_to, type, created_at, updated_at';

export interface TemplateRow {
  id: string;
  name: string;
  description: string | null;
  subject: string;
  body: string;
  from_email: string | null;
  from_name: string | null;
  reply_to: string | null;
  type: MailTemplateType;
  created_at: Date;
  updated_at: Date;
}

/** The writable columns, by API field name. */
export interface TemplateFields {
  name: string;
  description: string | null;
  subject: string;
  body: string;
  from: string | null;
  fromName: string | null;
  replyTo: string | null;
  type: MailTemplateType;
}

const COLUMN_OF: Record<keyof TemplateFields, string> = {
  name: 'name',
  description: 'description',
  subject: 'subject',
  body: 'body',
  from: 'from_email',
  fromName: 'from_name',
  replyTo: 'reply_to',
  type: 'type',
};

export function toTemplate(row: TemplateRow): MailTemplate {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    subject: row.subject,
    body: row.body,
    from: row.from_email,
    fromName: row.from_name,
    replyTo: row.reply_to,
    type: row.type,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface TemplateListFilter {
  limit: number;
  /** Keyset: only templates older than this id (pages run newest first). */
  beforeId?: string;
  search?: string;
  type?: MailTemplateType;
}

@Injectable()
export class TemplatesRepository {
  constructor(private readonly sql: Sql) {}

  async insert(projectId: string, fields: TemplateFields): Promise<TemplateRow> {
    const [row] = await this.sql.query<TemplateRow>(
      `INSERT INTO templates (project_id, name, description, subject, body, from_email, from_name, reply_to, type)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       RETURNING ${TEMPLATE_COLUMNS}`,
      [projectId, fields.name, fields.description, fields.subject, fields.body, fields.from, fields.fromName, fields.replyTo, fields.type],
    );
    return row;
  }

  /** One page (limit + 1 rows, newest first) and the total matching the filters. */
  list(projectId: string, filter: TemplateListFilter): Promise<{ rows: TemplateRow[]; total: number }> {
    const where = new SqlWhere().add('project_id = ?', projectId);
    if (filter.type) where.add('type = ?', filter.type);
    // A project has few templates: the (project_id, id) index narrows enough, no trigram index needed.
    if (filter.search) where.add('lower(name) LIKE ?', likePattern(filter.search.toLowerCase()));
    const page = { filter: where, beforeId: filter.beforeId, limit: filter.limit };
    return keysetPage<TemplateRow>(this.sql, { select: TEMPLATE_COLUMNS, from: 'templates', idColumn: 'id', ...page });
  }

  async findById(projectId: string, id: string): Promise<TemplateRow | null> {
    const [row] = await this.sql.query<TemplateRow>(`SELECT ${TEMPLATE_COLUMNS} FROM templates WHERE project_id = $1 AND id = $2`, [
      projectId,
      id,
    ]);
    return row ?? null;
  }

  /**
   * Sets the given fields (at least one). The statement text depends only on which fields are set, so
   * the prepared-statement cache holds a bounded set (at most 2^8 texts).
   */
  async update(projectId: string, id: string, patch: Partial<TemplateFields>): Promise<TemplateRow | null> {
    const params: unknown[] = [projectId, id];
    const sets = (Object.keys(COLUMN_OF) as (keyof TemplateFields)[])
      .filter((field) => patch[field] !== undefined)
      .map((field) => {
        params.push(patch[field]);
        return `${COLUMN_OF[field]} = $${params.length}`;
      });
    const [row] = await this.sql.query<TemplateRow>(
      `UPDATE templates SET ${sets.join(', ')}, updated_at = now() WHERE project_id = $1 AND id = $2 RETURNING ${TEMPLATE_COLUMNS}`,
      params,
    );
    return row ?? null;
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    const rows = await this.sql.query(`DELETE FROM templates WHERE project_id = $1 AND id = $2 RETURNING id`, [projectId, id]);
    return rows.length > 0;
  }
}
