import { Injectable } from '@nestjs/common';
import { query, queryOne, queryPrepared, SqlWhere, type Db } from '@app/service-kit';
import { keysetPage } from '../../core/database/keyset-page.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { waitEventNames, type WorkflowStep } from './workflow-definition.js';
import type { MailWorkflow } from './workflows.dto.js';

const WORKFLOW_COLUMNS = 'id, name, description, event_name, enabled, allow_reentry, steps, created_at, updated_at';

export interface WorkflowRow {
  id: string;
  name: string;
  description: string | null;
  event_name: string;
  enabled: boolean;
  allow_reentry: boolean;
  steps: WorkflowStep[];
  created_at: Date;
  updated_at: Date;
}

/** The writable fields, by API name. */
export interface WorkflowFields {
  name: string;
  description: string | null;
  eventName: string;
  enabled: boolean;
  allowReentry: boolean;
  steps: WorkflowStep[];
}

/** What the track hook needs of a project's workflows: which event names matter at all. */
export interface WorkflowTriggerRow {
  project_id: string;
  event_name: string;
  enabled: boolean;
  wait_event_names: string[];
}

export interface TemplateForSend {
  id: string;
  subject: string;
  body: string;
  from_email: string | null;
  from_name: string | null;
  reply_to: string | null;
  type: 'TRANSACTIONAL' | 'MARKETING';
}

export function toWorkflow(row: WorkflowRow): MailWorkflow {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    eventName: row.event_name,
    enabled: row.enabled,
    allowReentry: row.allow_reentry,
    steps: row.steps,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface WorkflowListFilter {
  limit: number;
  beforeId?: string;
  enabled?: boolean;
  eventName?: string;
}

/**
 * The one writer of `workflows`. Every statement is scoped to one project and skips deleted
 * workflows (DELETE is a soft delete: the executions it cancels keep their workflow row).
 */
@Injectable()
export class WorkflowsRepository {
  /** A new workflow's id before its insert: its webhook secret is sealed bound to it. */
  async newId(db: Db): Promise<string> {
    const [row] = await query<{ id: string }>(db, `SELECT uuid_generate_v7() AS id`);
    return row.id;
  }

  async insert(db: Db, scope: ProjectScope, input: { id: string; fields: WorkflowFields; sealedSecret: string }): Promise<WorkflowRow> {
    const { id, fields, sealedSecret } = input;
    const [row] = await query<WorkflowRow>(
      db,
      `INSERT INTO workflows (id, project_id, name, description, event_name, enabled, allow_reentry, steps, wait_event_names,
                              webhook_secret, enabled_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::text[], $10, CASE WHEN $6 THEN now() END)
       RETURNING ${WORKFLOW_COLUMNS}`,
      [
        id,
        scope.projectId,
        fields.name,
        fields.description,
        fields.eventName,
        fields.enabled,
        fields.allowReentry,
        JSON.stringify(fields.steps),
        waitEventNames(fields.steps),
        sealedSecret,
      ],
    );
    return row;
  }

  list(db: Db, scope: ProjectScope, filter: WorkflowListFilter): Promise<{ rows: WorkflowRow[]; total: number }> {
    const where = new SqlWhere().add('project_id = ?', scope.projectId).raw('deleted_at IS NULL');
    if (filter.enabled !== undefined) where.add('enabled = ?', filter.enabled);
    if (filter.eventName !== undefined) where.add('event_name = ?', filter.eventName);
    const page = { filter: where, beforeId: filter.beforeId, limit: filter.limit };
    return keysetPage<WorkflowRow>(db, { select: WORKFLOW_COLUMNS, from: 'workflows', idColumn: 'id', ...page });
  }

  findById(db: Db, scope: ProjectScope, id: string): Promise<WorkflowRow | null> {
    return queryOne<WorkflowRow>(db, `SELECT ${WORKFLOW_COLUMNS} FROM workflows WHERE project_id = $1 AND id = $2 AND deleted_at IS NULL`, [
      scope.projectId,
      id,
    ]);
  }

  /** Sets the given fields; `enabled_at` moves when the workflow is enabled (the sweep's catch-up starts there). */
  update(db: Db, scope: ProjectScope, input: { id: string; patch: Partial<WorkflowFields> }): Promise<WorkflowRow | null> {
    const { patch } = input;
    const params: unknown[] = [scope.projectId, input.id];
    const sets: string[] = [];
    const set = (column: string, value: unknown, cast = '') => {
      params.push(value);
      sets.push(`${column} = $${params.length}${cast}`);
    };
    if (patch.name !== undefined) set('name', patch.name);
    if (patch.description !== undefined) set('description', patch.description);
    if (patch.eventName !== undefined) set('event_name', patch.eventName);
    if (patch.allowReentry !== undefined) set('allow_reentry', patch.allowReentry);
    if (patch.steps !== undefined) {
      set('steps', JSON.stringify(patch.steps), '::jsonb');
      set('wait_event_names', waitEventNames(patch.steps), '::text[]');
    }
    if (patch.enabled !== undefined) {
      set('enabled', patch.enabled);
      sets.push(`enabled_at = CASE WHEN $${params.length} AND NOT enabled THEN now() ELSE enabled_at END`);
    }
    return queryOne<WorkflowRow>(
      db,
      `UPDATE workflows SET ${sets.join(', ')}, updated_at = now()
        WHERE project_id = $1 AND id = $2 AND deleted_at IS NULL
        RETURNING ${WORKFLOW_COLUMNS}`,
      params,
    );
  }

  /** Hides the workflow and stops it starting anything; false when there was none. */
  async softDelete(db: Db, scope: ProjectScope, id: string): Promise<boolean> {
    const rows = await query(
      db,
      `UPDATE workflows SET deleted_at = now(), enabled = false, updated_at = now()
        WHERE project_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING id`,
      [scope.projectId, id],
    );
    return rows.length > 0;
  }

  /** What a SEND_EMAIL step sends (a read of `templates`); null when the template was deleted. */
  templateForSend(db: Db, scope: ProjectScope, id: string): Promise<TemplateForSend | null> {
    return queryOne<TemplateForSend>(
      db,
      `SELECT id, subject, body, from_email, from_name, reply_to, type FROM templates WHERE project_id = $1 AND id = $2`,
      [scope.projectId, id],
    );
  }

  /** The ids among `ids` that are templates of the project (a read of `templates`). */
  async existingTemplates(db: Db, scope: ProjectScope, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await query<{ id: string }>(db, `SELECT id FROM templates WHERE project_id = $1 AND id = ANY($2::uuid[])`, [
      scope.projectId,
      ids,
    ]);
    return new Set(rows.map((r) => r.id));
  }

  /**
   * The trigger and awaited event names of every live workflow of these projects (the track hook's
   * cache). A read across projects: each row names its own.
   */
  triggerIndex(db: Db, projectIds: string[]): Promise<WorkflowTriggerRow[]> {
    return queryPrepared<WorkflowTriggerRow>(
      db,
      `SELECT project_id, event_name, enabled, wait_event_names FROM workflows
        WHERE project_id = ANY($1::uuid[]) AND deleted_at IS NULL AND (enabled OR cardinality(wait_event_names) > 0)`,
      [projectIds],
    );
  }
}
