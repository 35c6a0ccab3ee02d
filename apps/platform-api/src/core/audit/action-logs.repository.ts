import { Injectable } from '@nestjs/common';
import { execute, queryOne, queryPrepared, type Db } from '@app/service-kit';
import type { TenantScope } from '../scope/tenant-scope.js';
import type { Snapshot } from './command.js';

/** An entry the undo or redo claim took (the columns the bus needs to apply it). */
export interface ClaimedEntryRow {
  id: string;
  command_id: string;
  resource_id: string;
  snapshot_before: Snapshot | null;
  snapshot_after: Snapshot | null;
  action_label: string | null;
  context: Record<string, unknown> | null;
}

/** A new entry, written by the actor of the scope (`scope.userId`) in the tenant of the scope. */
export interface NewActionLogEntry {
  /** The organization context the actor acted in (undo claims only entries of that same context). */
  organizationId: string | null;
  commandId: string;
  label: string;
  actionType: string;
  resourceKind: string;
  resourceId: string;
  parent: { kind: string; id: string } | null;
  before: Snapshot | null;
  undoToken: string | null;
  source: string;
  context: Record<string, unknown> | null;
}

/** Whose latest entry an undo or redo claims: the actor of the scope, in this organization context. */
export interface ClaimInput {
  organizationId: string | null;
}

const CLAIMED_COLUMNS = 'id, command_id, resource_id, snapshot_before, snapshot_after, action_label, context';

/** The log columns both insert paths write first ($1..$14), then snapshot_after, changes, changed_fields. */
const LOG_COLUMNS = `tenant_id, organization_id, actor_user_id, command_id, action_label, action_type, resource_kind,
  resource_id, parent_resource_kind, parent_resource_id, undo_token, snapshot_before, source, context`;

function logValues(scope: TenantScope, e: NewActionLogEntry): unknown[] {
  return [
    scope.tenantId,
    e.organizationId,
    scope.userId,
    e.commandId,
    e.label,
    e.actionType,
    e.resourceKind,
    e.resourceId,
    e.parent?.kind ?? null,
    e.parent?.id ?? null,
    e.undoToken,
    e.before === null ? null : JSON.stringify(e.before),
    e.source,
    e.context === null ? null : JSON.stringify(e.context),
  ];
}

/**
 * The one writer of `action_logs`: the command bus's entries and its undo/redo state changes. The
 * two inserts run on every command, so they are named prepared statements (their texts come from a
 * bounded set: fixed pieces and the commands' own `snapshotSql`). Reads of the log for the API are in
 * modules/audit-logs.
 */
@Injectable()
export class ActionLogsRepository {
  /** Writes an entry whose "after" snapshot and changes the caller computed. */
  async insert(
    db: Db,
    scope: TenantScope,
    entry: NewActionLogEntry & { after: Snapshot | null; changes: Record<string, unknown> },
  ): Promise<void> {
    await queryPrepared(
      db,
      `INSERT INTO action_logs (${LOG_COLUMNS}, snapshot_after, changes, changed_fields)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
      [
        ...logValues(scope, entry),
        entry.after === null ? null : JSON.stringify(entry.after),
        JSON.stringify(entry.changes),
        Object.keys(entry.changes),
      ],
    );
  }

  /**
   * The entry and its "after" snapshot in one statement: the snapshot query runs as a CTE (its `$1`
   * and `$2`, the resource id and the snapshot's tenant, become `$15` and `$16`), and `audit_changes`
   * (SQL, same rule as `diffSnapshots`) derives `changes` from it.
   */
  async insertWithSnapshotSql(
    db: Db,
    scope: TenantScope,
    input: { entry: NewActionLogEntry; snapshotSql: string; snapshotTenantId: string | null },
  ): Promise<void> {
    const { entry, snapshotSql, snapshotTenantId } = input;
    await queryPrepared(
      db,
      `WITH after AS (${snapshotSql.replace(/\$([12])\b/g, (_, n: string) => `$${14 + Number(n)}`)})
       INSERT INTO action_logs (${LOG_COLUMNS}, snapshot_after, changes, changed_fields)
       SELECT $1::uuid, $2::uuid, $3::uuid, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, $10::text, $11::text,
              $12::jsonb, $13::text, $14::jsonb, s.after, c.changes, ARRAY(SELECT jsonb_object_keys(c.changes))
         FROM (SELECT (SELECT snapshot FROM after) AS after) s
        CROSS JOIN LATERAL (SELECT audit_changes($12::jsonb, s.after) AS changes) c`,
      [...logValues(scope, entry), entry.resourceId, snapshotTenantId],
    );
  }

  /**
   * Claims the actor's latest undoable entry if `undoToken` is its token (`undoing`): two concurrent
   * undos of one token cannot both claim it. Null when it is not that entry.
   */
  claimForUndo(db: Db, scope: TenantScope, input: ClaimInput & { undoToken: string }): Promise<ClaimedEntryRow | null> {
    return queryOne<ClaimedEntryRow>(
      db,
      `UPDATE action_logs SET execution_state = 'undoing', updated_at = now()
        WHERE undo_token = $1 AND execution_state IN ('done', 'redone')
          AND id = (SELECT id FROM action_logs
                     WHERE tenant_id = $2 AND actor_user_id = $3 AND organization_id IS NOT DISTINCT FROM $4
                       AND undo_token IS NOT NULL AND execution_state IN ('done', 'redone')
                     ORDER BY created_at DESC, id DESC LIMIT 1)
        RETURNING ${CLAIMED_COLUMNS}`,
      [input.undoToken, scope.tenantId, scope.userId, input.organizationId],
    );
  }

  /** An undone entry: its token is spent. */
  async markUndone(db: Db, scope: TenantScope, id: string): Promise<void> {
    await execute(
      db,
      `UPDATE action_logs SET execution_state = 'undone', undo_token = NULL, updated_at = now() WHERE id = $1 AND tenant_id = $2`,
      [id, scope.tenantId],
    );
  }

  /**
   * Claims the actor's latest undone entry if it is `logId`: marked `redone` with the fresh
   * `undoToken`. Null when it is not that entry.
   */
  claimForRedo(db: Db, scope: TenantScope, input: ClaimInput & { logId: string; undoToken: string }): Promise<ClaimedEntryRow | null> {
    return queryOne<ClaimedEntryRow>(
      db,
      `UPDATE action_logs SET execution_state = 'redone', undo_token = $5, updated_at = now()
        WHERE id = $1 AND execution_state = 'undone'
          AND id = (SELECT id FROM action_logs
                     WHERE tenant_id = $2 AND actor_user_id = $3 AND organization_id IS NOT DISTINCT FROM $4
                       AND execution_state = 'undone'
                     ORDER BY updated_at DESC, id DESC LIMIT 1)
        RETURNING ${CLAIMED_COLUMNS}`,
      [input.logId, scope.tenantId, scope.userId, input.organizationId, input.undoToken],
    );
  }
}
