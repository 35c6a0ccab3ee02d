import { randomBytes } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../auth/auth-context.js';
import { EventBus } from '../events/event-bus.service.js';
import { scopeOf } from '../scope/tenant-scope.js';
import { ActionLogsRepository, type ClaimedEntryRow, type NewActionLogEntry } from './action-logs.repository.js';
import type { CommandDefinition, Snapshot, SnapshotScope } from './command.js';
import { diffSnapshots, sameSnapshot } from './snapshot-diff.js';
import { withUndoToken } from './undo-token.js';

/** The entry context key that records a scoped entry's tenant (SnapshotScope). */
const SNAPSHOT_TENANT_KEY = 'snapshotTenantId';

/** The context of an entry, with its snapshot scope recorded when the snapshots hold only one tenant's part. */
function contextWithScope(context: Record<string, unknown> | null, scope: SnapshotScope): Record<string, unknown> | null {
  return scope.tenantId === null ? context : { ...context, [SNAPSHOT_TENANT_KEY]: scope.tenantId };
}

/** The scope an entry's snapshots were taken in (entries without one hold the whole resource). */
function snapshotScopeOf(entry: ClaimedEntryRow): SnapshotScope {
  const tenantId = entry.context?.[SNAPSHOT_TENANT_KEY];
  return { tenantId: typeof tenantId === 'string' ? tenantId : null };
}

/**
 * 144 random bits behind the creation time (ms, hex): unguessable, and new tokens sit next to each
 * other in the unique index instead of on random pages of it.
 */
function newUndoToken(): string {
  return `${Date.now().toString(16).padStart(12, '0')}${randomBytes(18).toString('base64url')}`;
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
    private readonly logs: ActionLogsRepository,
  ) {}

  register(...commands: CommandDefinition<never, unknown>[]): void {
    for (const command of commands) this.registry.set(command.id, command);
  }

  async execute<TInput, TResult extends object>(
    auth: AuthContext,
    command: CommandDefinition<TInput, TResult>,
    input: TInput,
    context: Record<string, unknown> | null = null,
  ): Promise<TResult> {
    this.register(command);
    const { result, undoToken, resourceId } = await this.dataSource.transaction(async (tx) => {
      const targetId = command.targetId?.(input) ?? null;
      const scope = command.snapshotScope?.(auth, input) ?? { tenantId: null };
      const before = targetId ? await command.snapshot(tx, targetId, { forUpdate: true, tenantId: scope.tenantId }) : null;
      const outcome = await command.execute(tx, auth, input, before);
      const token = command.restore ? newUndoToken() : null;
      const entry: NewActionLogEntry = {
        organizationId: auth.organizationId,
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
      if (command.snapshotSql) {
        await this.logs.insertWithSnapshotSql(tx, scopeOf(auth), {
          entry,
          snapshotSql: command.snapshotSql,
          snapshotTenantId: scope.tenantId,
        });
      } else {
        await this.record(tx, auth, { ...entry, after: await command.snapshot(tx, outcome.resourceId, { tenantId: scope.tenantId }) });
      }
      return { result: outcome.result, undoToken: token, resourceId: outcome.resourceId };
    });
    await this.afterCommit(auth, command, resourceId);
    return withUndoToken(result, undoToken);
  }

  /** Undoes the caller's latest undoable entry, if `undoToken` is its token. */
  async undo(auth: AuthContext, undoToken: string): Promise<{ ok: true; logId: string }> {
    const { entry, command } = await this.dataSource.transaction(async (tx) => {
      const claimed = await this.logs.claimForUndo(tx, scopeOf(auth), { undoToken, organizationId: auth.organizationId });
      if (!claimed) throw DomainError.badRequest('invalid or unavailable undo token');
      const command = await this.apply(tx, auth, claimed, claimed.snapshot_after, claimed.snapshot_before);
      await this.logs.markUndone(tx, scopeOf(auth), claimed.id);
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
      const claimed = await this.logs.claimForRedo(tx, scopeOf(auth), { logId, undoToken, organizationId: auth.organizationId });
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
  private async apply(tx: EntityManager, auth: AuthContext, entry: ClaimedEntryRow, expected: Snapshot | null, target: Snapshot | null) {
    const command = this.registry.get(entry.command_id);
    if (!command?.restore) throw DomainError.badRequest('this action cannot be undone');
    if (!auth.can(...command.features)) {
      throw DomainError.forbidden(`missing required features: ${command.features.join(', ')}`);
    }
    const scope = snapshotScopeOf(entry);
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
    entry: ClaimedEntryRow,
    kind: 'undo' | 'redo',
    before: Snapshot | null,
    after: Snapshot | null,
  ): Promise<void> {
    await this.record(tx, auth, {
      organizationId: auth.organizationId,
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
      context: contextWithScope({ [`${kind}OfLogId`]: entry.id }, snapshotScopeOf(entry)),
    });
  }

  /** An entry whose "after" snapshot is known: its changes are computed here. */
  private async record(tx: EntityManager, auth: AuthContext, e: NewActionLogEntry & { after: Snapshot | null }): Promise<void> {
    await this.logs.insert(tx, scopeOf(auth), { ...e, changes: diffSnapshots(e.before, e.after) });
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
