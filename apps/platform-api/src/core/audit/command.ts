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
  /** The resource an edit or delete targets (read before execution); omit for creates. */
  targetId?(input: TInput): string | null;
  /**
   * The resource as JSON, or null when it does not exist. The bus takes the "before" snapshot with
   * `forUpdate`: a command whose target can be written concurrently locks it in that same statement,
   * so no writer commits between the snapshot and this command's write (an undo would then restore a
   * stale state), at no extra round trip.
   */
  snapshot(tx: EntityManager, resourceId: string, options?: { forUpdate?: boolean }): Promise<Snapshot | null>;
  /**
   * The same snapshot as one SQL query (`$1` the resource id; one row with a jsonb column `snapshot`,
   * none when the resource does not exist). Given, the bus takes the "after" snapshot inside the
   * statement that writes the log entry: one round trip fewer on every command.
   */
  snapshotSql?: string;
  /** `before`: the locked snapshot of the target (null for creates), so a command need not read it again. */
  execute(tx: EntityManager, auth: AuthContext, input: TInput, before: Snapshot | null): Promise<CommandOutcome<TResult>>;
  /** Makes the resource equal to `snapshot` (null: remove it). Runs inside the undo/redo transaction. */
  restore?(tx: EntityManager, resourceId: string, snapshot: Snapshot | null): Promise<void>;
  /** After any commit of this command, its undo or its redo (cache invalidation and the like). */
  afterCommit?(auth: AuthContext, resourceId: string): Promise<void>;
  /** Event emitted after commit, payload `{id: resourceId}`. */
  event?: string;
}
