import { Injectable } from '@nestjs/common';
import { query, queryOne, SqlWhere, type Db } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import type { ActionSortField } from './audit-logs.dto.js';

/**
 * What a log query selects within the scope. The scope's tenant bounds every query, and its
 * `organizationIds` (when not null) the organizations the entries were recorded in.
 */
export interface LogFilter {
  /** null: every actor of the tenant (tenant viewers); else only these actors. */
  actorUserIds: string[] | null;
  organizationId?: string;
  before?: Date;
  after?: Date;
}

export interface ActionLogFilter extends LogFilter {
  resourceKind?: string;
  resourceId?: string;
  includeRelated?: boolean;
  actionTypes?: string[];
  fieldNames?: string[];
  /** Only the entries this caller can undo: its own, in its organization context, with a live undo token. */
  undoableBy?: UndoContext;
}

/** Whose undo an entry is: its actor, in the organization context it acted in (the undo claim's scope). */
export interface UndoContext {
  userId: string;
  organizationId: string | null;
}

export interface AccessLogFilter extends LogFilter {
  resourceKind?: string;
  accessType?: string;
}

export interface Sort {
  field: ActionSortField;
  dir: 'asc' | 'desc';
}

export interface Window {
  limit: number;
  offset: number;
}

export interface ActionLogRow {
  id: string;
  command_id: string;
  action_label: string | null;
  action_type: string;
  execution_state: string;
  source: string;
  actor_user_id: string | null;
  actor_name: string | null;
  tenant_id: string;
  tenant_name: string | null;
  organization_id: string | null;
  organization_name: string | null;
  resource_kind: string | null;
  resource_id: string | null;
  parent_resource_kind: string | null;
  parent_resource_id: string | null;
  undo_token: string | null;
  created_at: Date;
  updated_at: Date;
  snapshot_before: Record<string, unknown> | null;
  snapshot_after: Record<string, unknown> | null;
  changes: Record<string, { from: unknown; to: unknown }> | null;
  context: Record<string, unknown> | null;
}

/** What the CSV export needs of an entry (no snapshots). */
export type ActionLogExportRow = Pick<
  ActionLogRow,
  | 'id'
  | 'created_at'
  | 'actor_user_id'
  | 'actor_name'
  | 'command_id'
  | 'action_label'
  | 'resource_kind'
  | 'resource_id'
  | 'changes'
  | 'source'
>;

export interface AccessLogRow {
  id: string;
  resource_kind: string;
  resource_id: string | null;
  access_type: string;
  actor_user_id: string | null;
  actor_name: string | null;
  tenant_id: string;
  tenant_name: string | null;
  organization_id: string | null;
  organization_name: string | null;
  fields: string[];
  context: Record<string, unknown> | null;
  created_at: Date;
}

interface CountRow {
  n: number;
}

/** The actor's display name, as the `user` sort and the `actorUserName` field read it. */
const ACTOR_NAME = `COALESCE(NULLIF(btrim(u.name), ''), u.email)`;

function scopeClauses(w: SqlWhere, scope: TenantScope, f: LogFilter): SqlWhere {
  w.add('a.tenant_id = ?', scope.tenantId);
  if (f.actorUserIds) {
    if (f.actorUserIds.length === 1) w.add('a.actor_user_id = ?', f.actorUserIds[0]);
    else w.add('a.actor_user_id = ANY(?::uuid[])', f.actorUserIds);
  }
  if (scope.organizationIds) w.add('a.organization_id = ANY(?::uuid[])', scope.organizationIds);
  if (f.organizationId) w.add('a.organization_id = ?', f.organizationId);
  if (f.before) w.add('a.created_at < ?', f.before);
  if (f.after) w.add('a.created_at >= ?', f.after);
  return w;
}

function actionWhere(scope: TenantScope, f: ActionLogFilter): SqlWhere {
  const w = scopeClauses(new SqlWhere(), scope, f);
  if (f.resourceId && f.includeRelated) {
    const id = w.param(f.resourceId);
    if (f.resourceKind) {
      const kind = w.param(f.resourceKind);
      w.raw(
        `((a.resource_kind = ${kind} AND a.resource_id = ${id}) OR (a.parent_resource_kind = ${kind} AND a.parent_resource_id = ${id}))`,
      );
    } else {
      w.raw(`(a.resource_id = ${id} OR a.parent_resource_id = ${id})`);
    }
  } else {
    if (f.resourceKind) w.add('a.resource_kind = ?', f.resourceKind);
    if (f.resourceId) w.add('a.resource_id = ?', f.resourceId);
  }
  if (f.actionTypes?.length) w.add('a.action_type = ANY(?::text[])', f.actionTypes);
  if (f.fieldNames?.length) w.add('a.changed_fields && ?::text[]', f.fieldNames);
  if (f.undoableBy) {
    w.add('a.actor_user_id = ?', f.undoableBy.userId);
    w.add('a.organization_id IS NOT DISTINCT FROM ?::uuid', f.undoableBy.organizationId);
    w.raw(`a.undo_token IS NOT NULL AND a.execution_state IN ('done', 'redone')`);
  }
  return w;
}

interface OrderTerm {
  expr: string;
  dir: 'ASC' | 'DESC';
  nullsLast?: boolean;
}

/** The sort as ORDER BY terms; ties are always newest first so pages are stable. */
function orderTerms(sort: Sort): { terms: OrderTerm[]; needsActor: boolean } {
  const dir = sort.dir === 'asc' ? 'ASC' : 'DESC';
  const tie: OrderTerm[] = [
    { expr: 'a.created_at', dir: 'DESC' },
    { expr: 'a.id', dir: 'DESC' },
  ];
  switch (sort.field) {
    case 'user':
      return { terms: [{ expr: `lower(${ACTOR_NAME})`, dir, nullsLast: true }, ...tie], needsActor: true };
    case 'action':
      return { terms: [{ expr: 'lower(a.action_label)', dir, nullsLast: true }, ...tie], needsActor: false };
    case 'field':
      return { terms: [{ expr: 'a.changed_fields[1]', dir, nullsLast: true }, ...tie], needsActor: false };
    case 'source':
      return { terms: [{ expr: 'a.source', dir }, ...tie], needsActor: false };
    case 'createdAt':
    default:
      return {
        terms: [
          { expr: 'a.created_at', dir },
          { expr: 'a.id', dir },
        ],
        needsActor: false,
      };
  }
}

/** ORDER BY of the id selection; `reverse` is the exact inverse order (a deep page read from the end). */
function orderBy(sort: Sort, reverse = false): { sql: string; needsActor: boolean } {
  const { terms, needsActor } = orderTerms(sort);
  const sql = terms
    .map((t) => {
      const dir = reverse ? (t.dir === 'ASC' ? 'DESC' : 'ASC') : t.dir;
      const nulls = t.nullsLast === undefined ? '' : t.nullsLast !== reverse ? ' NULLS LAST' : ' NULLS FIRST';
      return `${t.expr} ${dir}${nulls}`;
    })
    .join(', ');
  return { sql, needsActor };
}

const NAMES_JOIN = `
  LEFT JOIN users u ON u.id = a.actor_user_id
  LEFT JOIN tenants t ON t.id = a.tenant_id
  LEFT JOIN organizations o ON o.id = a.organization_id`;

type LogTable = 'action_logs' | 'access_logs';

/**
 * The deferred join of a page: `FROM` the ids `pageIds` picks (in its order), joined back to `table`'s
 * rows (as `a`) and to the names, ordered as picked (`reverse`: the page was picked from the other end).
 */
function pageOf(table: LogTable, pageIds: string, reverse: boolean): string {
  return `FROM unnest(ARRAY(${pageIds})) WITH ORDINALITY AS p(id, ord)
         JOIN ${table} a ON a.id = p.id
         ${NAMES_JOIN}
        ORDER BY p.ord ${reverse ? 'DESC' : 'ASC'}`;
}

async function countWhere(db: Db, table: LogTable, w: SqlWhere): Promise<number> {
  const row = await queryOne<CountRow>(db, `SELECT count(*)::int AS n FROM ${table} a WHERE ${w.sql()}`, w.params);
  return row?.n ?? 0;
}

/**
 * The API's reads of the action and access logs (their one writer each is in core/audit:
 * ActionLogsRepository, AccessLogsRepository). Pages use a deferred join: the ids of one page are picked
 * through the (tenant_id, created_at, id) indexes alone (index-only scans), and only those rows are
 * then read and joined to users, tenants and organizations, so a deep page does not read 100,000
 * wide rows. A page past the middle can be read from the other end (`reverse`), so the last page of
 * 100,000 entries skips nothing.
 */
@Injectable()
export class AuditLogsRepository {
  /** One page; `reverse`: `window` counts from the end of the order (rows still come back in order). */
  listActions(
    db: Db,
    scope: TenantScope,
    input: { filter: ActionLogFilter; sort: Sort; window: Window; reverse: boolean },
  ): Promise<ActionLogRow[]> {
    const { filter, sort, window, reverse } = input;
    const w = actionWhere(scope, filter);
    const order = orderBy(sort, reverse);
    const limit = w.param(window.limit);
    const offset = w.param(window.offset);
    return query<ActionLogRow>(
      db,
      `SELECT a.id, a.command_id, a.action_label, a.action_type, a.execution_state, a.source, a.actor_user_id,
              ${ACTOR_NAME} AS actor_name, a.tenant_id, t.name AS tenant_name, a.organization_id, o.name AS organization_name,
              a.resource_kind, a.resource_id, a.parent_resource_kind, a.parent_resource_id, a.undo_token,
              a.created_at, a.updated_at, a.snapshot_before, a.snapshot_after, a.changes, a.context
         ${pageOf(
           'action_logs',
           `SELECT a.id FROM action_logs a ${order.needsActor ? 'LEFT JOIN users u ON u.id = a.actor_user_id' : ''}
             WHERE ${w.sql()} ORDER BY ${order.sql} LIMIT ${limit} OFFSET ${offset}`,
           reverse,
         )}`,
      w.params,
    );
  }

  countActions(db: Db, scope: TenantScope, filter: ActionLogFilter): Promise<number> {
    return countWhere(db, 'action_logs', actionWhere(scope, filter));
  }

  /** Ids of the entries to export, in export order. */
  async actionIds(db: Db, scope: TenantScope, input: { filter: ActionLogFilter; sort: Sort; limit: number }): Promise<string[]> {
    const { filter, sort, limit } = input;
    const w = actionWhere(scope, filter);
    const order = orderBy(sort);
    const rows = await query<{ id: string }>(
      db,
      `SELECT a.id FROM action_logs a ${order.needsActor ? 'LEFT JOIN users u ON u.id = a.actor_user_id' : ''}
        WHERE ${w.sql()} ORDER BY ${order.sql} LIMIT ${w.param(limit)}`,
      w.params,
    );
    return rows.map((r) => r.id);
  }

  /** The export columns of these entries (of the scope's tenant), in the order of `ids`. */
  exportRows(db: Db, scope: TenantScope, ids: string[]): Promise<ActionLogExportRow[]> {
    return query<ActionLogExportRow>(
      db,
      `SELECT a.id, a.created_at, a.actor_user_id, ${ACTOR_NAME} AS actor_name, a.command_id, a.action_label,
              a.resource_kind, a.resource_id, a.changes, a.source
         FROM unnest($2::uuid[]) WITH ORDINALITY AS p(id, ord)
         JOIN action_logs a ON a.id = p.id AND a.tenant_id = $1
         LEFT JOIN users u ON u.id = a.actor_user_id
        ORDER BY p.ord`,
      [scope.tenantId, ids],
    );
  }

  listAccess(db: Db, scope: TenantScope, input: { filter: AccessLogFilter; window: Window; reverse: boolean }): Promise<AccessLogRow[]> {
    const { filter, window, reverse } = input;
    const w = accessWhere(scope, filter);
    const dir = reverse ? 'ASC' : 'DESC';
    const limit = w.param(window.limit);
    const offset = w.param(window.offset);
    return query<AccessLogRow>(
      db,
      `SELECT a.id, a.resource_kind, a.resource_id, a.access_type, a.actor_user_id, ${ACTOR_NAME} AS actor_name,
              a.tenant_id, t.name AS tenant_name, a.organization_id, o.name AS organization_name, a.fields, a.context, a.created_at
         ${pageOf(
           'access_logs',
           `SELECT a.id FROM access_logs a WHERE ${w.sql()} ORDER BY a.created_at ${dir}, a.id ${dir} LIMIT ${limit} OFFSET ${offset}`,
           reverse,
         )}`,
      w.params,
    );
  }

  countAccess(db: Db, scope: TenantScope, filter: AccessLogFilter): Promise<number> {
    return countWhere(db, 'access_logs', accessWhere(scope, filter));
  }
}

function accessWhere(scope: TenantScope, f: AccessLogFilter): SqlWhere {
  const w = scopeClauses(new SqlWhere(), scope, f);
  if (f.resourceKind) w.add('a.resource_kind = ?', f.resourceKind);
  if (f.accessType) w.add('a.access_type = ?', f.accessType);
  return w;
}
