import { Injectable } from '@nestjs/common';
import { execute, query, queryOne, queryPrepared, type Db } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import type { NotificationItemDto, NotificationSeverity, NotificationStatus } from './notifications.dto.js';
import type { NotificationContent } from './notifications.queue.js';

export interface NotificationRow {
  id: string;
  tenant_id: string;
  organization_id: string | null;
  recipient_user_id: string;
  batch_id: string;
  type: string;
  title: string;
  body: string | null;
  title_key: string | null;
  body_key: string | null;
  title_variables: Record<string, unknown> | null;
  body_variables: Record<string, unknown> | null;
  icon: string | null;
  severity: NotificationSeverity;
  status: NotificationStatus;
  actions: { id: string; label: string }[];
  source_module: string | null;
  source_entity_type: string | null;
  source_entity_id: string | null;
  link_href: string | null;
  group_key: string | null;
  action_taken: string | null;
  created_at: Date;
  read_at: Date | null;
  dismissed_at: Date | null;
  expires_at: Date | null;
}

export interface NotificationFilters {
  status?: NotificationStatus;
  type?: string;
  severity?: NotificationSeverity;
  sourceEntityType?: string;
  sourceEntityId?: string;
  since?: string;
  ids?: string[];
}

/** One write of notifications (a request, or a fan-out job): unique with each recipient. */
export interface BatchRef {
  batchId: string;
  createdByUserId: string | null;
}

const COLUMNS = `id, tenant_id, organization_id, recipient_user_id, batch_id, type, title, body, title_key, body_key,
  title_variables, body_variables, icon, severity, status, actions, source_module, source_entity_type, source_entity_id,
  link_href, group_key, action_taken, created_at, read_at, dismissed_at, expires_at`;

/** Expired notifications are neither listed, counted nor changed. */
const NOT_EXPIRED = '(expires_at IS NULL OR expires_at > now())';
/**
 * Every query of a recipient's own notifications starts with this (tenant first: the index leads
 * with it). A notification belongs to its recipient, not to an organization: the scope's
 * organizations do not narrow what a user sees of its own.
 */
const OWN = `tenant_id = $1 AND recipient_user_id = $2 AND ${NOT_EXPIRED}`;

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function toNotificationItem(row: NotificationRow): NotificationItemDto {
  return {
    id: row.id,
    type: row.type,
    title: row.title,
    body: row.body,
    titleKey: row.title_key,
    bodyKey: row.body_key,
    titleVariables: row.title_variables,
    bodyVariables: row.body_variables,
    icon: row.icon,
    severity: row.severity,
    status: row.status,
    actions: row.actions ?? [],
    sourceModule: row.source_module,
    sourceEntityType: row.source_entity_type,
    sourceEntityId: row.source_entity_id,
    linkHref: row.link_href,
    groupKey: row.group_key,
    recipientUserId: row.recipient_user_id,
    createdAt: iso(row.created_at) as string,
    readAt: iso(row.read_at),
    dismissedAt: iso(row.dismissed_at),
    expiresAt: iso(row.expires_at),
    actionTaken: row.action_taken,
  };
}

/** The SQL of notifications: a recipient's reads and state changes, and set-based writes. */
@Injectable()
export class NotificationsRepository {
  /** The scope user's notifications: one page and the total. */
  async list(
    db: Db,
    scope: TenantScope,
    input: { filters: NotificationFilters; page: { limit: number; offset: number } },
  ): Promise<{ rows: NotificationRow[]; total: number }> {
    const { filters, page } = input;
    const params: unknown[] = [scope.tenantId, recipientOf(scope)];
    const where = [OWN];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (filters.status) add('status = ?', filters.status);
    else where.push(`status <> 'dismissed'`);
    if (filters.type) add('type = ?', filters.type);
    if (filters.severity) add('severity = ?', filters.severity);
    if (filters.sourceEntityType) add('source_entity_type = ?', filters.sourceEntityType);
    if (filters.sourceEntityId) add('source_entity_id = ?', filters.sourceEntityId);
    if (filters.since) add('created_at >= ?::timestamptz', filters.since);
    if (filters.ids) add('id = ANY(?::uuid[])', filters.ids);
    const clause = where.join(' AND ');
    const n = params.length;
    const [rows, counted] = await Promise.all([
      query<NotificationRow>(
        db,
        `SELECT ${COLUMNS} FROM notifications WHERE ${clause} ORDER BY created_at DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...params, page.limit, page.offset],
      ),
      queryOne<{ total: number }>(db, `SELECT count(*)::int AS total FROM notifications WHERE ${clause}`, params),
    ]);
    return { rows, total: counted?.total ?? 0 };
  }

  /**
   * The badge: the scope user's unread notifications, and when the first of them expires (it then
   * stops counting: UnreadCountCache keeps the count until then). An index-only scan of
   * notifications_unread_idx; prepared, the badge is polled by every open page.
   */
  async unreadCount(db: Db, scope: TenantScope): Promise<{ count: number; nextExpiry: Date | null }> {
    const [row] = await queryPrepared<{ n: number; next_expiry: Date | null }>(
      db,
      `SELECT count(*)::int AS n, min(expires_at) AS next_expiry FROM notifications WHERE ${OWN} AND status = 'unread'`,
      [scope.tenantId, recipientOf(scope)],
    );
    return { count: row?.n ?? 0, nextExpiry: row?.next_expiry ?? null };
  }

  /** How many went from unread to read. */
  markAllRead(db: Db, scope: TenantScope): Promise<number> {
    return execute(db, `UPDATE notifications SET status = 'read', read_at = COALESCE(read_at, now()) WHERE ${OWN} AND status = 'unread'`, [
      scope.tenantId,
      recipientOf(scope),
    ]);
  }

  findOwn(db: Db, scope: TenantScope, id: string): Promise<NotificationRow | null> {
    return queryOne<NotificationRow>(db, `SELECT ${COLUMNS} FROM notifications WHERE ${OWN} AND id = $3`, [
      scope.tenantId,
      recipientOf(scope),
      id,
    ]);
  }

  /** unread becomes read (readAt set); other statuses keep theirs. Null: no such notification of the user. */
  markRead(db: Db, scope: TenantScope, id: string): Promise<NotificationRow | null> {
    return this.updateOwn(db, scope, id, {
      set: `status = CASE WHEN status = 'unread' THEN 'read' ELSE status END, read_at = COALESCE(read_at, now())`,
    });
  }

  dismiss(db: Db, scope: TenantScope, id: string): Promise<NotificationRow | null> {
    return this.updateOwn(db, scope, id, { set: `status = 'dismissed', dismissed_at = COALESCE(dismissed_at, now())` });
  }

  /**
   * A dismissed notification back to `to`. Null when it is not dismissed (or not the user's). Throws
   * the unique violation of `notifications_group_key_uq` when another one holds its groupKey.
   */
  restore(db: Db, scope: TenantScope, input: { id: string; to: 'read' | 'unread' }): Promise<NotificationRow | null> {
    return this.updateOwn(db, scope, input.id, {
      set: `status = $4::text, dismissed_at = NULL,
            read_at = CASE WHEN $4::text = 'read' THEN COALESCE(read_at, now()) ELSE NULL END`,
      condition: `status = 'dismissed'`,
      params: [input.to],
    });
  }

  /** The claim of an action: only the first of concurrent calls finds action_taken still null (else null). */
  claimAction(
    db: Db,
    scope: TenantScope,
    input: { id: string; actionId: string; payload: Record<string, unknown> | null },
  ): Promise<NotificationRow | null> {
    return this.updateOwn(db, scope, input.id, {
      set: `status = 'actioned', action_taken = $4, action_payload = $5::jsonb, actioned_at = now(), read_at = COALESCE(read_at, now())`,
      condition: `action_taken IS NULL AND status <> 'dismissed'`,
      params: [input.actionId, input.payload ? JSON.stringify(input.payload) : null],
    });
  }

  /**
   * Writes one notification per recipient (users of the scope's tenant that are not deleted; others
   * are skipped), in one statement. ON CONFLICT DO NOTHING covers both unique indexes: a recipient
   * this batch already reached (a retry) and a recipient with an active notification of the same
   * groupKey. Rows are inserted in recipient order, so concurrent batches lock index entries in the
   * same order. Recipients are any users of the tenant: the sender's organizations do not narrow them.
   * The recipients drive the join (one primary-key probe each): `users.id = ANY(...)` made the
   * planner scan every user of the table for each 1000-row chunk of a fan-out.
   */
  async insertForRecipients(
    db: Db,
    scope: TenantScope,
    input: { batch: BatchRef; content: NotificationContent; recipientIds: string[] },
  ): Promise<NotificationRow[]> {
    const { batch, content, recipientIds } = input;
    if (content.groupKey) await this.dismissExpiredOfGroup(db, scope, { groupKey: content.groupKey, recipientIds });
    return query<NotificationRow>(
      db,
      `INSERT INTO notifications (tenant_id, organization_id, recipient_user_id, batch_id, created_by_user_id, type, title, body,
         title_key, body_key, title_variables, body_variables, icon, severity, actions, source_module, source_entity_type,
         source_entity_id, link_href, group_key, expires_at)
       SELECT u.tenant_id, u.organization_id, u.id, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11, $12, $13::jsonb,
              $14, $15, $16, $17, $18, $19::timestamptz
         FROM unnest($20::uuid[]) AS r(id)
         JOIN users u ON u.id = r.id
        WHERE u.tenant_id = $1 AND u.deleted_at IS NULL
        ORDER BY u.id
       ON CONFLICT DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        scope.tenantId,
        batch.batchId,
        batch.createdByUserId,
        content.type,
        content.title,
        content.body,
        content.titleKey,
        content.bodyKey,
        json(content.titleVariables),
        json(content.bodyVariables),
        content.icon,
        content.severity,
        JSON.stringify(content.actions),
        content.sourceModule,
        content.sourceEntityType,
        content.sourceEntityId,
        content.linkHref,
        content.groupKey,
        content.expiresAt,
        recipientIds,
      ],
    );
  }

  /** The recipient's notification that holds a groupKey (the one a deduplicated create answers with). */
  async activeIdOfGroup(db: Db, scope: TenantScope, input: { recipientUserId: string; groupKey: string }): Promise<string | null> {
    const row = await queryOne<{ id: string }>(
      db,
      `SELECT id FROM notifications
        WHERE tenant_id = $1 AND recipient_user_id = $2 AND group_key = $3 AND status <> 'dismissed'`,
      [scope.tenantId, input.recipientUserId, input.groupKey],
    );
    return row?.id ?? null;
  }

  /** A batch's notifications with their recipients' addresses (for the email strategy). */
  batchForEmail(db: Db, scope: TenantScope, batchId: string): Promise<(NotificationRow & { email: string })[]> {
    return query<NotificationRow & { email: string }>(
      db,
      `SELECT n.*, u.email
         FROM notifications n JOIN users u ON u.id = n.recipient_user_id AND u.deleted_at IS NULL
        WHERE n.tenant_id = $1 AND n.batch_id = $2
        ORDER BY n.recipient_user_id`,
      [scope.tenantId, batchId],
    );
  }

  /**
   * Housekeeping, across tenants (so no scope): deletes up to `limit` notifications that expired more
   * than `olderThan` (a Postgres interval, from the caller's fixed list) ago, through the expiry index.
   * Returns how many it deleted; the caller repeats while a full batch went.
   */
  purgeExpired(db: Db, input: { olderThan: string; limit: number }): Promise<number> {
    return execute(
      db,
      `DELETE FROM notifications WHERE id IN (
         SELECT id FROM notifications WHERE expires_at < now() - $1::interval ORDER BY expires_at LIMIT $2)`,
      [input.olderThan, input.limit],
    );
  }

  /**
   * One conditional UPDATE of the user's notification: `set` (a fixed fragment of this class) applies
   * only where `condition` holds, atomically (two concurrent claims cannot both succeed). Null when
   * nothing matched.
   */
  private async updateOwn(
    db: Db,
    scope: TenantScope,
    id: string,
    change: { set: string; condition?: string; params?: unknown[] },
  ): Promise<NotificationRow | null> {
    const condition = change.condition ? ` AND ${change.condition}` : '';
    return queryOne<NotificationRow>(
      db,
      `UPDATE notifications SET ${change.set} WHERE ${OWN} AND id = $3${condition} RETURNING ${COLUMNS}`,
      [scope.tenantId, recipientOf(scope), id, ...(change.params ?? [])],
    );
  }

  /**
   * An expired notification no longer counts as active, but it still holds its groupKey in the
   * unique index: dismiss it so the new one can take its place (rows locked in id order, so two
   * concurrent batches of one group cannot deadlock here).
   */
  private async dismissExpiredOfGroup(db: Db, scope: TenantScope, input: { groupKey: string; recipientIds: string[] }): Promise<void> {
    await execute(
      db,
      `UPDATE notifications SET status = 'dismissed', dismissed_at = now()
        WHERE id IN (SELECT id FROM notifications
                      WHERE tenant_id = $1 AND recipient_user_id = ANY($2::uuid[]) AND group_key = $3
                        AND status <> 'dismissed' AND expires_at <= now()
                      ORDER BY id FOR UPDATE)`,
      [scope.tenantId, input.recipientIds, input.groupKey],
    );
  }
}

/** The recipient whose own notifications a call reads or changes: the scope's user. */
function recipientOf(scope: TenantScope): string {
  if (!scope.userId) throw new Error('a recipient’s notifications are read and changed in the scope of that user');
  return scope.userId;
}

function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
