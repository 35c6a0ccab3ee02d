import { Injectable } from '@nestjs/common';
import type { MailTemplate, MailTemplateType } from '@app/contracts';
import { execute, likePattern, query, queryOne, queryPrepared, SqlWhere, type Db } from '@app/service-kit';
import { keysetPage } from '../../core/database/keyset-page.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';

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

/** The one writer of `templates`; every statement is scoped to one project. */
@Injectable()
export class TemplatesRepository {
  async insert(db: Db, scope: ProjectScope, fields: TemplateFields): Promise<TemplateRow> {
    const [row] = await query<TemplateRow>(
      db,
      `INSERT INTO templates (project_id, name, description, subject, body, from_email, from_name, reply_to, type)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       RETURNING ${TEMPLATE_COLUMNS}`,
      [
        scope.projectId,
        fields.name,
        fields.description,
        fields.subject,
        fields.body,
        fields.from,
        fields.fromName,
        fields.replyTo,
        fields.type,
      ],
    );
    return row;
  }

  /** One page (limit + 1 rows, newest first) and the total matching the filters. */
  list(db: Db, scope: ProjectScope, filter: TemplateListFilter): Promise<{ rows: TemplateRow[]; total: number }> {
    const where = new SqlWhere().add('project_id = ?', scope.projectId);
    if (filter.type) where.add('type = ?', filter.type);
    // A project has few templates: the (project_id, id) index narrows enough, no trigram index needed.
    if (filter.search) where.add('lower(name) LIKE ?', likePattern(filter.search.toLowerCase()));
    const page = { filter: where, beforeId: filter.beforeId, limit: filter.limit };
    return keysetPage<TemplateRow>(db, { select: TEMPLATE_COLUMNS, from: 'templates', idColumn: 'id', ...page });
  }

  /** Also the template lookup of POST /v1/send: a named prepared statement, like the rest of the send path. */
  async findById(db: Db, scope: ProjectScope, id: string): Promise<TemplateRow | null> {
    const [row] = await queryPrepared<TemplateRow>(db, `SELECT ${TEMPLATE_COLUMNS} FROM templates WHERE project_id = $1 AND id = $2`, [
      scope.projectId,
      id,
    ]);
    return row ?? null;
  }

  /** Sets the given fields (at least one); the statement names only those. */
  update(db: Db, scope: ProjectScope, input: { id: string; patch: Partial<TemplateFields> }): Promise<TemplateRow | null> {
    const params: unknown[] = [scope.projectId, input.id];
    const sets = (Object.keys(COLUMN_OF) as (keyof TemplateFields)[])
      .filter((field) => input.patch[field] !== undefined)
      .map((field) => {
        params.push(input.patch[field]);
        return `${COLUMN_OF[field]} = $${params.length}`;
      });
    return queryOne<TemplateRow>(
      db,
      `UPDATE templates SET ${sets.join(', ')}, updated_at = now() WHERE project_id = $1 AND id = $2 RETURNING ${TEMPLATE_COLUMNS}`,
      params,
    );
  }

  async delete(db: Db, scope: ProjectScope, id: string): Promise<boolean> {
    return (await execute(db, `DELETE FROM templates WHERE project_id = $1 AND id = $2`, [scope.projectId, id])) > 0;
  }
}
