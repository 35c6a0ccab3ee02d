import { randomBytes } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { DomainError, preparedQuery } from '@app/service-kit';
import type { AuthContext } from '../auth/auth-context.js';
import { EventBus } from '../events/event-bus.service.js';
import type { CommandDefinition, Snapshot, SnapshotScope } from './command.js';
import { diffSnapshots, sameSnapshot } from './snapshot-diff.js';
import { withUndoToken } from './undo-token.js';

interface ClaimedEntry {
  id: string;
  command_id: string;
  resource_id: string;
  snapshot_before: Snapshot | null;
  snapshot_after: Snapshot | null;
  action_label: string | null;
  context: Record<string, unknown> | null;
}

/** The entry context key that records a scoped entry's tenant (SnapshotScope). */
const SNAPSHOT_TENANT_KEY = 'snapshotTenantId';

/** The context of an entry, with its snapshot scope recorded when the snapshots hold only one tenant's part. */
function contextWithScope(context: Record<string, unknown> | null, scope: SnapshotScope): Record<string, unknown> | null {
  return scope.tenantId === null ? context : { ...context, [SNAPSHOT_TENANT_KEY]: scope.tenantId };
}

/** The scope an entry's snapshots were taken in (entries without one hold the whole resource). */
function scopeOf(entry: ClaimedEntry): SnapshotScope {
  const tenantId = entry.context?.[SNAPSHOT_TENANT_KEY];
  return { tenantId: typeof tenantId === 'string' ? tenantId : null };
}

interface LogEntry {
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

/**
 * 144 random bits behind the creation time (ms, hex): unguessable, and new tokens sit next to each
 * other in the unique index instead of on random pages of it.
 */
function newUndoToken(): string {
  return `${Date.now().toString(16).padStart(12, '0')}${randomBytes(18).toString('base64url')}`;
}

/** The log columns both insert paths write first ($1..$14), then snapshot_after, changes, changed_fields. */
const LOG_COLUMNS = `tenant_id, organization_id, actor_user_id, command_id, action_label, action_type, resource_kind,
  resource_id, parent_resource_kind, parent_resource_id, undo_token, snapshot_before, source, context`;

function logValues(auth: AuthContext, e: LogEntry): unknown[] {
  return [
    auth.tenantId,
    auth.organizationId,
    auth.userId,
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
 * Runs mutations as commands: snapshot before, execute, snapshot after and the action log entry, all
 * in one transaction; then undo and redo of the caller's latest entries. Commands register themselves
 * (by id) the first time they run or when their module starts, so undo finds the inverse.
 */
@Injectable()
export class CommandBus {
  private readonly logger = new Logger(CommandBus.name);
  private readonly registry = new Map<string, CommandDefinition<unknown, unknown>>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: EventBus,
  ) {}

  register(...commands: CommandDefinition<never, unknown>[]): void {
    for (const command of commands) this.registry.set(command.id, command as CommandDefinition<unknown, unknown>);
  }

  async execute<TInput, TResult extends object>(
    auth: AuthContext,
    command: CommandDefinition<TInput, TResult>,
    input: TInput,
    context: Record<string, unknown> | null = null,
  ): Promise<TResult> {
    this.register(command as CommandDefinition<never, unknown>);
    const { result, undoToken, resourceId } = await this.dataSource.transaction(async (tx) => {
      const targetId = command.targetId?.(input) ?? null;
      const scope = command.snapshotScope?.(auth, input) ?? { tenantId: null };
      const before = targetId ? await command.snapshot(tx, targetId, { forUpdate: true, tenantId: scope.tenantId }) : null;
      const outcome = await command.execute(tx, auth, input, before);
      const token = command.restore ? newUndoToken() : null;
      const entry: LogEntry = {
        commandId: command.id,
        label: command.label,
        actionType: command.actionType,
        resourceKind: command.resourceKind,
        resourceId: outcome.resourceId,
        parent: outcome.parent ?? null,
        before,
        undoToken: token,
        source: 'api',
        context: contextWithScope(context, scope),
      };
      if (command.snapshotSql) await this.recordWithSnapshotSql(tx, auth, entry, command.snapshotSql, scope);
      else await this.record(tx, auth, { ...entry, after: await command.snapshot(tx, outcome.resourceId, { tenantId: scope.tenantId }) });
      return { result: outcome.result, undoToken: token, resourceId: outcome.resourceId };
    });
    await this.afterCommit(auth, command, resourceId);
    return withUndoToken(result, undoToken);
  }

  /** Undoes the caller's latest undoable entry, if `undoToken` is its token. */
  async undo(auth: AuthContext, undoToken: string): Promise<{ ok: true; logId: string }> {
    const { entry, command } = await this.dataSource.transaction(async (tx) => {
      const [rows] = await tx.query(
        `UPDATE action_logs SET execution_state = 'undoing', updated_at = now()
          WHERE undo_token = $1 AND execution_state IN ('done', 'redone')
            AND id = (SELECT id FROM action_logs
                       WHERE tenant_id = $2 AND actor_user_id = $3 AND organization_id IS NOT DISTINCT FROM $4
                         AND undo_token IS NOT NULL AND execution_state IN ('done', 'redone')
                       ORDER BY created_at DESC, id DESC LIMIT 1)
          RETURNING id, command_id, resource_id, snapshot_before, snapshot_after, action_label, context`,
        [undoToken, auth.tenantId, auth.userId, auth.organizationId],
      );
      const claimed = (rows as ClaimedEntry[])[0];
      if (!claimed) throw DomainError.badRequest('invalid or unavailable undo token');
      const command = await this.apply(tx, auth, claimed, claimed.snapshot_after, claimed.snapshot_before);
      await tx.query(`UPDATE action_logs SET execution_state = 'undone', undo_token = NULL, updated_at = now() WHERE id = $1`, [
        claimed.id,
      ]);
      await this.recordReplay(tx, auth, command, claimed, 'undo', claimed.snapshot_after, claimed.snapshot_before);
      return { entry: claimed, command };
    });
    await this.afterCommit(auth, command, entry.resource_id);
    return { ok: true, logId: entry.id };
  }

  /** Re-applies the caller's latest undone entry (`logId` must be it) and gives it a fresh undo token. */
  async redo(auth: AuthContext, logId: string): Promise<{ ok: true; logId: string; undoToken: string }> {
    const undoToken = newUndoToken();
    const { entry, command } = await this.dataSource.transaction(async (tx) => {
      const [rows] = await tx.query(
        `UPDATE action_logs SET execution_state = 'redone', undo_token = $5, updated_at = now()
          WHERE id = $1 AND execution_state = 'undone'
            AND id = (SELECT id FROM action_logs
                       WHERE tenant_id = $2 AND actor_user_id = $3 AND organization_id IS NOT DISTINCT FROM $4
                         AND execution_state = 'undone'
                       ORDER BY updated_at DESC, id DESC LIMIT 1)
          RETURNING id, command_id, resource_id, snapshot_before, snapshot_after, action_label, context`,
        [logId, auth.tenantId, auth.userId, auth.organizationId, undoToken],
      );
      const claimed = (rows as ClaimedEntry[])[0];
      if (!claimed) throw DomainError.badRequest('log entry not eligible for redo');
      const command = await this.apply(tx, auth, claimed, claimed.snapshot_before, claimed.snapshot_after);
      await this.recordReplay(tx, auth, command, claimed, 'redo', claimed.snapshot_before, claimed.snapshot_after);
      return { entry: claimed, command };
    });
    await this.afterCommit(auth, command, entry.resource_id);
    return { ok: true, logId: entry.id, undoToken };
  }

  /**
   * Restores `target` after checking that the caller still holds the command's features (403), that
   * the resource is still as `expected` (400: no later change lost), and the command's own rules for
   * writing `target` now (the grant boundary). A throw rolls the claim of the entry back.
   */
  private async apply(tx: EntityManager, auth: AuthContext, entry: ClaimedEntry, expected: Snapshot | null, target: Snapshot | null) {
    const command = this.registry.get(entry.command_id);
    if (!command?.restore) throw DomainError.badRequest('this action cannot be undone');
    if (!auth.can(...command.features)) {
      throw DomainError.forbidden(`missing required features: ${command.features.join(', ')}`);
    }
    const scope = scopeOf(entry);
    const current = await command.snapshot(tx, entry.resource_id, { tenantId: scope.tenantId });
    if (!sameSnapshot(current, expected)) {
      throw DomainError.badRequest('the resource changed since this action; it can no longer be undone or redone');
    }
    await command.authorizeRestore?.(tx, auth, { resourceId: entry.resource_id, current, target, scope });
    await command.restore(tx, entry.resource_id, target, scope);
    return command;
  }

  private async recordReplay(
    tx: EntityManager,
    auth: AuthContext,
    command: CommandDefinition<unknown, unknown>,
    entry: ClaimedEntry,
    kind: 'undo' | 'redo',
    before: Snapshot | null,
    after: Snapshot | null,
  ): Promise<void> {
    await this.record(tx, auth, {
      commandId: command.id,
      label: `${kind === 'undo' ? 'Undo' : 'Redo'}: ${entry.action_label ?? command.label}`,
      actionType: command.actionType,
      resourceKind: command.resourceKind,
      resourceId: entry.resource_id,
      parent: null,
      before,
      after,
      undoToken: null,
      source: kind,
      context: contextWithScope({ [`${kind}OfLogId`]: entry.id }, scopeOf(entry)),
    });
  }

  private async record(tx: EntityManager, auth: AuthContext, e: LogEntry & { after: Snapshot | null }): Promise<void> {
    const changes = diffSnapshots(e.before, e.after);
    await preparedQuery(
      tx,
      `INSERT INTO action_logs (${LOG_COLUMNS}, snapshot_after, changes, changed_fields)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
      [...logValues(auth, e), e.after === null ? null : JSON.stringify(e.after), JSON.stringify(changes), Object.keys(changes)],
    );
  }

  /**
   * The log entry and the "after" snapshot in one statement: the snapshot query runs as a CTE (its `$1`
   * and `$2` become `$15` and `$16`), and `audit_changes` (SQL, same rule as `diffSnapshots`) derives
   * `changes` from it.
   */
  private async recordWithSnapshotSql(
    tx: EntityManager,
    auth: AuthContext,
    e: LogEntry,
    snapshotSql: string,
    scope: SnapshotScope,
  ): Promise<void> {
    await preparedQuery(
      tx,
      `WITH after AS (${snapshotSql.replace(/\$([12])\b/g, (_, n: string) => `$${14 + Number(n)}`)})
       INSERT INTO action_logs (${LOG_COLUMNS}, snapshot_after, changes, changed_fields)
       SELECT $1::uuid, $2::uuid, $3::uuid, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, $10::text, $11::text,
              $12::jsonb, $13::text, $14::jsonb, s.after, c.changes, ARRAY(SELECT jsonb_object_keys(c.changes))
         FROM (SELECT (SELECT snapshot FROM after) AS after) s
        CROSS JOIN LATERAL (SELECT audit_changes($12::jsonb, s.after) AS changes) c`,
      [...logValues(auth, e), e.resourceId, scope.tenantId],
    );
  }

  private async afterCommit(
    auth: AuthContext,
    command: CommandDefinition<never, unknown> | CommandDefinition<unknown, unknown>,
    resourceId: string,
  ) {
    try {
      await command.afterCommit?.(auth, resourceId);
    } catch (err) {
      this.logger.error({ err, command: command.id }, 'after-commit hook failed');
    }
    if (command.event) {
      await this.events
        .emit({ id: command.event, tenantId: auth.tenantId, organizationId: auth.organizationId, payload: { id: resourceId } })
        .catch(() => undefined);
    }
  }
}
