import { Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { AccessLogService } from '../../core/audit/access-log.service.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import { ACTION_LOG_CSV_COLUMNS, actionLogCsvStream } from './action-log-csv.js';
import {
  ACTIONS_LIMIT_DEFAULT,
  EXPORT_LIMIT_MAX,
  LOG_PAGE_SIZE_DEFAULT,
  type AccessLogEntryDto,
  type AccessLogPageDto,
  type ActionLogEntryDto,
  type ActionLogFilterQuery,
  type ActionLogPageDto,
  type ExportActionLogsQuery,
  type ListAccessLogsQuery,
  type ListActionLogsQuery,
} from './audit-logs.dto.js';
import {
  AuditLogsRepository,
  type AccessLogRow,
  type ActionLogFilter,
  type ActionLogRow,
  type LogFilter,
  type Sort,
  type UndoContext,
  type Window,
} from './audit-logs.repository.js';

export const VIEW_TENANT_FEATURE = 'audit_logs.view_tenant';
const EXPORT_BATCH = 200;
/** From this offset on a page waits for the count, to read from the nearer end. */
const DEEP_OFFSET = 2000;

interface Paging extends Window {
  page: number;
  pageSize: number;
}

/**
 * Action logs (list, CSV export, undo, redo) and access logs of the caller's tenant. Callers holding
 * `audit_logs.view_tenant` see every entry of their tenant (within their organization restriction);
 * everyone else only the entries they made themselves. Super administrators see their own tenant.
 */
@Injectable()
export class AuditLogsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repo: AuditLogsRepository,
    private readonly bus: CommandBus,
    private readonly accessLog: AccessLogService,
  ) {}

  async listActions(auth: AuthContext, query: ListActionLogsQuery): Promise<ActionLogPageDto> {
    const { scope, visible, canViewTenant } = this.scope(auth, query);
    const filter = actionFilter(auth, visible, query);
    const paging = pagingOf(query, ACTIONS_LIMIT_DEFAULT);
    const sort = sortOf(query);
    const db = this.dataSource;
    const { rows, total, hasMore } = await readPage(
      paging,
      query.includeTotal ?? true,
      () => this.repo.countActions(db, scope, filter),
      (window, reverse) => this.repo.listActions(db, scope, { filter, sort, window, reverse }),
    );
    return { items: rows.map((row) => toActionEntry(auth, row)), canViewTenant, ...pageInfo(paging, total, hasMore) };
  }

  /** Validates, picks the entries and records the export before the first byte is sent. */
  async exportActions(auth: AuthContext, query: ExportActionLogsQuery): Promise<{ filename: string; stream: Readable }> {
    const { scope, visible } = this.scope(auth, query);
    const filter = actionFilter(auth, visible, query);
    const limit = Math.min(query.limit ?? EXPORT_LIMIT_MAX, EXPORT_LIMIT_MAX);
    const ids = await this.repo.actionIds(this.dataSource, scope, { filter, sort: sortOf(query), limit });
    this.accessLog.record(auth, {
      resourceKind: 'audit_logs.action_log',
      accessType: 'export',
      fields: ACTION_LOG_CSV_COLUMNS,
      context: { format: 'csv', entries: ids.length, filters: filtersOf(query) },
    });
    const { repo, dataSource } = this;
    async function* batches() {
      for (let i = 0; i < ids.length; i += EXPORT_BATCH) yield repo.exportRows(dataSource, scope, ids.slice(i, i + EXPORT_BATCH));
    }
    return { filename: 'action-logs.csv', stream: actionLogCsvStream(batches) };
  }

  undo(auth: AuthContext, undoToken: string): Promise<{ ok: true; logId: string }> {
    return this.bus.undo(auth, undoToken);
  }

  redo(auth: AuthContext, logId: string): Promise<{ ok: true; logId: string; undoToken: string }> {
    return this.bus.redo(auth, logId);
  }

  async listAccess(auth: AuthContext, query: ListAccessLogsQuery): Promise<AccessLogPageDto> {
    const { scope, visible, canViewTenant } = this.scope(auth, query);
    const filter = { ...visible, resourceKind: query.resourceKind, accessType: query.accessType };
    const paging = pagingOf(query, LOG_PAGE_SIZE_DEFAULT);
    const db = this.dataSource;
    const { rows, total } = await readPage(
      paging,
      true,
      () => this.repo.countAccess(db, scope, filter),
      (window, reverse) => this.repo.listAccess(db, scope, { filter, window, reverse }),
    );
    return { items: rows.map(toAccessEntry), canViewTenant, ...pageInfo(paging, total, false) };
  }

  /**
   * The caller's tenant, and: every actor for tenant viewers (restricted to their organizations when
   * their ACL restricts them), else the caller alone (its own entries of any organization, so the
   * scope has no organization restriction). Naming another actor without being a tenant viewer is
   * 403, as is an organization outside the caller's restriction.
   */
  private scope(
    auth: AuthContext,
    query: { actorUserId?: string[]; organizationId?: string; before?: string; after?: string },
  ): { scope: TenantScope; visible: LogFilter; canViewTenant: boolean } {
    const canViewTenant = auth.can(VIEW_TENANT_FEATURE);
    const actors = query.actorUserId?.length ? [...new Set(query.actorUserId)] : null;
    if (!canViewTenant && actors?.some((id) => id !== auth.userId)) {
      throw DomainError.forbidden(`filtering by another actor needs ${VIEW_TENANT_FEATURE}`);
    }
    if (query.organizationId && !auth.canAccessOrganization(query.organizationId)) {
      throw DomainError.forbidden('organization is outside your access');
    }
    const restricted = canViewTenant && !auth.isSuperAdmin ? auth.acl.organizations : null;
    return {
      canViewTenant,
      scope: { tenantId: auth.tenantId, organizationIds: restricted, userId: auth.userId },
      visible: {
        actorUserIds: canViewTenant ? actors : [auth.userId],
        organizationId: query.organizationId,
        before: query.before ? new Date(query.before) : undefined,
        after: query.after ? new Date(query.after) : undefined,
      },
    };
  }
}

/** The undo scope of the caller (CommandBus.undo claims only entries of its user and organization context). */
function undoContextOf(auth: AuthContext): UndoContext {
  return { userId: auth.userId, organizationId: auth.organizationId };
}

function actionFilter(auth: AuthContext, visible: LogFilter, query: ActionLogFilterQuery): ActionLogFilter {
  return {
    ...visible,
    resourceKind: query.resourceKind,
    resourceId: query.resourceId,
    includeRelated: query.includeRelated ?? false,
    actionTypes: query.actionType?.length ? query.actionType : undefined,
    fieldNames: query.fieldName?.length ? query.fieldName : undefined,
    // Only what the caller itself can undo: a tenant viewer is never handed anyone else's token.
    undoableBy: query.undoableOnly ? undoContextOf(auth) : undefined,
  };
}

function sortOf(query: ActionLogFilterQuery): Sort {
  return { field: query.sortField ?? 'createdAt', dir: query.sortDir ?? 'desc' };
}

/** `page`/`pageSize` when either is given; else the legacy `limit`/`offset`; else page 1. */
function pagingOf(query: { page?: number; pageSize?: number; limit?: number; offset?: number }, defaultLimit: number): Paging {
  if (query.page !== undefined || query.pageSize !== undefined || (query.limit === undefined && query.offset === undefined)) {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? LOG_PAGE_SIZE_DEFAULT;
    return { page, pageSize, limit: pageSize, offset: (page - 1) * pageSize };
  }
  const limit = query.limit ?? defaultLimit;
  const offset = query.offset ?? 0;
  return { page: Math.floor(offset / limit) + 1, pageSize: limit, limit, offset };
}

/**
 * One page of a log. Shallow pages: the page and the count run side by side. Deep pages (offset from
 * DEEP_OFFSET on): the count first, then the page is read from whichever end is nearer, so the index
 * scan skips at most half the entries (none for the last page). Without a total, one extra row
 * tells whether a next page exists.
 */
async function readPage<T>(
  paging: Paging,
  includeTotal: boolean,
  count: () => Promise<number>,
  fetch: (window: Window, reverse: boolean) => Promise<T[]>,
): Promise<{ rows: T[]; total: number | null; hasMore: boolean }> {
  const { limit, offset } = paging;
  if (!includeTotal) {
    const rows = await fetch({ limit: limit + 1, offset }, false);
    return { rows: rows.slice(0, limit), total: null, hasMore: rows.length > limit };
  }
  if (offset < DEEP_OFFSET) {
    const [rows, total] = await Promise.all([fetch({ limit, offset }, false), count()]);
    return { rows, total, hasMore: offset + rows.length < total };
  }
  const total = await count();
  if (offset >= total) return { rows: [], total, hasMore: false };
  const fromEnd = total - offset - limit;
  const rows =
    fromEnd < offset
      ? await fetch({ limit: Math.min(limit, total - offset), offset: Math.max(0, fromEnd) }, true)
      : await fetch({ limit, offset }, false);
  return { rows, total, hasMore: offset + rows.length < total };
}

function pageInfo(paging: Paging, total: number | null, hasMore: boolean) {
  const base = { page: paging.page, pageSize: paging.pageSize };
  if (total === null) return { ...base, total: null, totalPages: null, hasMore };
  return { ...base, total, totalPages: Math.max(1, Math.ceil(total / paging.pageSize)) };
}

/** The filters an export was made with, for its access log entry. */
function filtersOf(query: ExportActionLogsQuery): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
}

function toActionEntry(auth: AuthContext, row: ActionLogRow): ActionLogEntryDto {
  return {
    id: row.id,
    commandId: row.command_id,
    actionLabel: row.action_label,
    actionType: row.action_type,
    executionState: row.execution_state,
    source: row.source,
    actorUserId: row.actor_user_id,
    actorUserName: row.actor_name,
    tenantId: row.tenant_id,
    tenantName: row.tenant_name,
    organizationId: row.organization_id,
    organizationName: row.organization_name,
    resourceKind: row.resource_kind,
    resourceId: row.resource_id,
    parentResourceKind: row.parent_resource_kind,
    parentResourceId: row.parent_resource_id,
    // Only the actor, in the organization context it acted in, can undo an entry: nobody else is handed its token.
    undoToken: isOwnEntry(row, undoContextOf(auth)) ? row.undo_token : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    snapshotBefore: row.snapshot_before,
    snapshotAfter: row.snapshot_after,
    changes: row.changes,
    context: row.context,
  };
}

function isOwnEntry(row: ActionLogRow, who: UndoContext): boolean {
  return row.actor_user_id === who.userId && row.organization_id === who.organizationId;
}

function toAccessEntry(row: AccessLogRow): AccessLogEntryDto {
  return {
    id: row.id,
    resourceKind: row.resource_kind,
    resourceId: row.resource_id,
    accessType: row.access_type,
    actorUserId: row.actor_user_id,
    actorUserName: row.actor_name,
    tenantId: row.tenant_id,
    tenantName: row.tenant_name,
    organizationId: row.organization_id,
    organizationName: row.organization_name,
    fields: row.fields,
    context: row.context,
    createdAt: row.created_at.toISOString(),
  };
}
