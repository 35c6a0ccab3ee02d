import type { EntityManager } from 'typeorm';
import type { AuthContext } from '../auth/auth-context.js';

export type ActionType = 'create' | 'edit' | 'delete' | 'assign';
export type ExecutionState = 'done' | 'undoing' | 'undone' | 'failed' | 'redone';

/** A plain JSON picture of a resource, taken before and after a command. */
export type Snapshot = Record<string, unknown>;

export interface CommandOutcome<TResult> {
  resourceId: string;
  result: TResult;
  parent?: { kind: string; id: string };
}

/**
 * Which part of a resource the snapshots of one log entry hold. `tenantId`: only the rows of that tenant
 * (a global role has ACLs and members in every tenant, and a tenant administrator's entry must not
 * record the other tenants'); null: the whole resource.
 */
export interface SnapshotScope {
  tenantId: string | null;
}

/** What an undo or a redo is about to do: make the resource, now `current`, equal to `target`. */
export interface RestorePlan {
  resourceId: string;
  current: Snapshot | null;
  target: Snapshot | null;
  scope: SnapshotScope;
}

/**
 * A mutation of the platform's own resources (decisions.md "Audit and action logs"). The bus runs
 * `execute` between two `snapshot`s in one transaction and records the action log entry in it.
 * A command with `restore` is undoable: undo restores the snapshot before, redo the snapshot after.
 */
export interface CommandDefinition<TInput, TResult> {
  /** Stable id, also the key the undo/redo registry finds the command by (`auth.roles.update`). */
  id: string;
  label: string;
  actionType: ActionType;
  resourceKind: string;
  /**
   * The features the command needs (those of the routes that run it). An undo or a redo is a new write
   * of the same resource, so the bus requires them again then, against the caller's current ACL: an
   * administrator who lost them can no longer revert or replay what it did.
   */
  features: readonly string[];
  /** The resource an edit or delete targets (read before execution); omit for creates. */
  targetId?(input: TInput): string | null;
  /**
   * The part of the resource the entry's snapshots hold (default: all of it). Recorded with the entry
   * (context `snapshotTenantId`), so its undo and redo compare and restore that same part.
   */
  snapshotScope?(auth: AuthContext, input: TInput): SnapshotScope;
  /**
   * The resource as JSON, or null when it does not exist. The bus takes the "before" snapshot with
   * `forUpdate`: a command whose target can be written concurrently locks it in that same statement,
   * so no writer commits between the snapshot and this command's write (an undo would then restore a
   * stale state), at no extra round trip. `tenantId`: the scope's tenant (null or absent: all).
   */
  snapshot(tx: EntityManager, resourceId: string, options?: { forUpdate?: boolean; tenantId?: string | null }): Promise<Snapshot | null>;
  /**
   * The same snapshot as one SQL query (`$1` the resource id, `$2` the scope's tenant, null for all; one
   * row with a jsonb column `snapshot`, none when the resource does not exist). Given, the bus takes the
   * "after" snapshot inside the statement that writes the log entry: one round trip fewer on every command.
   */
  snapshotSql?: string;
  /** `before`: the locked snapshot of the target (null for creates), so a command need not read it again. */
  execute(tx: EntityManager, auth: AuthContext, input: TInput, before: Snapshot | null): Promise<CommandOutcome<TResult>>;
  /**
   * Makes the resource (its part in `scope`) equal to `snapshot` (null: remove it). Runs inside the
   * undo/redo transaction.
   */
  restore?(tx: EntityManager, resourceId: string, snapshot: Snapshot | null, scope?: SnapshotScope): Promise<void>;
  /**
   * Before an undo or a redo is applied: throws (403, 404) unless the caller may, now, make the
   * resource equal to `plan.target`, by the rules `execute` applies (the grant boundary). Runs in the
   * undo/redo transaction, after the bus has checked `features` and that the resource is unchanged.
   */
  authorizeRestore?(tx: EntityManager, auth: AuthContext, plan: RestorePlan): Promise<void>;
  /** After any commit of this command, its undo or its redo (cache invalidation and the like). */
  afterCommit?(auth: AuthContext, resourceId: string): Promise<void>;
  /** Event emitted after commit, payload `{id: resourceId}`. */
  event?: string;
}
