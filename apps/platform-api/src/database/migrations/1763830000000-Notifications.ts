import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-user notifications and the per-tenant notification settings.
 *
 * Two unique indexes make every write idempotent and race-free, with `INSERT ... ON CONFLICT DO NOTHING`:
 * - (batch_id, recipient_user_id): a batch (one request, or one fan-out job) writes at most one row
 *   per recipient, so a retried or duplicated job is a no-op for the rows it already wrote;
 * - (tenant_id, recipient_user_id, group_key) among rows not dismissed: the `groupKey` dedup. A unique
 *   index, unlike `WHERE NOT EXISTS`, stays correct when two writers race: the second waits for the
 *   first to commit, then skips the row.
 */
export class Notifications1763830000000 implements MigrationInterface {
  name = 'Notifications1763830000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE notifications (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        organization_id uuid,
        recipient_user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        batch_id uuid NOT NULL,
        type text NOT NULL,
        title text NOT NULL,
        body text,
        title_key text,
        body_key text,
        title_variables jsonb,
        body_variables jsonb,
        icon text,
        severity text NOT NULL CHECK (severity IN ('info', 'warning', 'success', 'error')),
        status text NOT NULL DEFAULT 'unread' CHECK (status IN ('unread', 'read', 'actioned', 'dismissed')),
        actions jsonb NOT NULL DEFAULT '[]',
        source_module text,
        source_entity_type text,
        source_entity_id text,
        link_href text,
        group_key text,
        action_taken text,
        action_payload jsonb,
        created_by_user_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        read_at timestamptz,
        actioned_at timestamptz,
        dismissed_at timestamptz,
        expires_at timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX notifications_batch_recipient_uq ON notifications (batch_id, recipient_user_id)`);
    await q.query(
      `CREATE UNIQUE INDEX notifications_group_key_uq ON notifications (tenant_id, recipient_user_id, group_key)
        WHERE group_key IS NOT NULL AND status <> 'dismissed'`,
    );
    // The list: a recipient's notifications, newest first.
    await q.query(
      `CREATE INDEX notifications_recipient_created_idx ON notifications (tenant_id, recipient_user_id, created_at DESC, id DESC)`,
    );
    // The badge (GET /notifications/unread-count, mark-all-read): an index-only count.
    await q.query(
      `CREATE INDEX notifications_unread_idx ON notifications (tenant_id, recipient_user_id, expires_at) WHERE status = 'unread'`,
    );
    await q.query(`
      CREATE TABLE notification_settings (
        tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
        settings jsonb NOT NULL,
        updated_by_user_id uuid,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE notification_settings, notifications`);
  }
}
