import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { NotificationContent } from '@app/contracts';
import type { NotificationItemDto, NotificationSeverity, NotificationStatus } from './notifications.dto.js';
import { isUniqueViolation } from '../../core/database/sql-helpers.js';

type Queryable = DataSource | EntityManager;

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

export interface BatchRef {
  batchId: string;
  tenantId: string;
  createdByUserId: string | null;
}

const COLUMNS = `id, tenant_id, organization_id, recipient_user_id, batch_id, type, title, body, title_key, body_key,
  title_variables, body_variables, icon, severity, status, actions, source_module, source_entity_type, source_entity_id,
  link_href, group_key, action_taken, created_at, read_at, dismissed_at, expires_at`;

/** Expired notifications are neither listed, counted nor changed. */
const NOT_EXPIRED = '(expires_at IS NULL OR expires_at > now())';
/** Every query of a recipient's own notifications starts with this (tenant first: the index leads with it). */
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
  constructor(private readonly dataSource: DataSource) {}

  async list(
    tenantId: string,
    userId: string,
    filters: NotificationFilters,
    page: { limit: number; offset: number },
  ): Promise<{ rows: NotificationRow[]; total: number }> {
    const params: unknown[] = [tenantId, userId];
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
      this.dataSource.query(
        `SELECT ${COLUMNS} FROM notifications WHERE ${clause} ORDER BY created_at DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...params, page.limit, page.offset],
      ),
      this.dataSource.query(`SELECT count(*)::int AS total FROM notifications WHERE ${clause}`, params),
    ]);
    return { rows, total: counted[0].total };
  }

  async unreadCount(tenantId: string, userId: string): Promise<number> {
    const [row] = await this.dataSource.query(`SELECT count(*)::int AS n FROM notifications WHERE ${OWN} AND status = 'unread'`, [
      tenantId,
      userId,
    ]);
    return row.n;
  }

  async markAllRead(tenantId: string, userId: string): Promise<number> {
    const [, affected] = await this.dataSource.query(
      `UPDATE notifications SET status = 'read', read_at = COALESCE(read_at, now()) WHERE ${OWN} AND status = 'unread'`,
      [tenantId, userId],
    );
    return affected;
  }

  async findOwn(tenantId: string, userId: string, id: string): Promise<NotificationRow | null> {
    const rows = await this.dataSource.query(`SELECT ${COLUMNS} FROM notifications WHERE ${OWN} AND id = $3`, [tenantId, userId, id]);
    return rows[0] ?? null;
  }

  /**
   * One conditional UPDATE of the caller's notification: `set` applies only where `condition` holds,
   * atomically (two concurrent claims cannot both succeed). Null when nothing matched.
   */
  async updateOwn(
    tenantId: string,
    userId: string,
    id: string,
    change: { set: string; condition?: string; params?: unknown[] },
  ): Promise<NotificationRow | null> {
    const condition = change.condition ? ` AND ${change.condition}` : '';
    const [rows] = await this.dataSource.query(
      `UPDATE notifications SET ${change.set} WHERE ${OWN} AND id = $3${condition} RETURNING ${COLUMNS}`,
      [tenantId, userId, id, ...(change.params ?? [])],
    );
    return rows[0] ?? null;
  }

  /**
   * Writes one notification per recipient (users of the tenant that are not deleted; others are
   * skipped), in one statement. ON CONFLICT DO NOTHING covers both unique indexes: a recipient this
   * batch already reached (a retry) and a recipient with an active notification of the same groupKey.
   * Rows are inserted in recipient order, so concurrent batches lock index entries in the same order.
   */
  async insertForRecipients(
    db: Queryable,
    batch: BatchRef,
    content: NotificationContent,
    recipientIds: string[],
  ): Promise<NotificationRow[]> {
    if (content.groupKey) await this.dismissExpiredOfGroup(db, batch.tenantId, content.groupKey, recipientIds);
    return db.query(
      `INSERT INTO notifications (tenant_id, organization_id, recipient_user_id, batch_id, created_by_user_id, type, title, body,
         title_key, body_key, title_variables, body_variables, icon, severity, actions, source_module, source_entity_type,
         source_entity_id, link_href, group_key, expires_at)
       SELECT u.tenant_id, u.organization_id, u.id, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11, $12, $13::jsonb,
              $14, $15, $16, $17, $18, $19::timestamptz
         FROM users u
        WHERE u.tenant_id = $1 AND u.id = ANY($20::uuid[]) AND u.deleted_at IS NULL
        ORDER BY u.id
       ON CONFLICT DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        batch.tenantId,
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
  async activeIdOfGroup(tenantId: string, userId: string, groupKey: string): Promise<string | null> {
    const rows = await this.dataSource.query(
      `SELECT id FROM notifications
        WHERE tenant_id = $1 AND recipient_user_id = $2 AND group_key = $3 AND status <> 'dismissed'`,
      [tenantId, userId, groupKey],
    );
    return rows[0]?.id ?? null;
  }

  /** A batch's notifications with their recipients' addresses (for the email strategy). */
  async batchForEmail(tenantId: string, batchId: string): Promise<(NotificationRow & { email: string })[]> {
    return this.dataSource.query(
      `SELECT n.*, u.email
         FROM notifications n JOIN users u ON u.id = n.recipient_user_id AND u.deleted_at IS NULL
        WHERE n.tenant_id = $1 AND n.batch_id = $2
        ORDER BY n.recipient_user_id`,
      [tenantId, batchId],
    );
  }

  /**
   * An expired notification no longer counts as active, but it still holds its groupKey in the
   * unique index: dismiss it so the new one can take its place (rows locked in id order, so two
   * concurrent batches of one group cannot deadlock here).
   */
  private async dismissExpiredOfGroup(db: Queryable, tenantId: string, groupKey: string, recipientIds: string[]): Promise<void> {
    await db.query(
      `UPDATE notifications SET status = 'dismissed', dismissed_at = now()
        WHERE id IN (SELECT id FROM notifications
                      WHERE tenant_id = $1 AND recipient_user_id = ANY($2::uuid[]) AND group_key = $3
                        AND status <> 'dismissed' AND expires_at <= now()
                      ORDER BY id FOR UPDATE)`,
      [tenantId, recipientIds, groupKey],
    );
  }
}

function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
