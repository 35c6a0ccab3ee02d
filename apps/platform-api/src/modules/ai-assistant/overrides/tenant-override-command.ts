import type { EntityManager } from 'typeorm';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import type { Snapshot, SnapshotScope } from '../../../core/audit/command.js';
import { systemScope, type TenantScope } from '../../../core/scope/tenant-scope.js';

/** How one kind of per-tenant override reads and writes its row, by resource id (an agent id, say). */
export interface TenantOverrideStore<TInput> {
  resourceKind: string;
  features: readonly string[];
  targetId: (input: TInput) => string;
  /** The tenant's override as the action log keeps it (null: none). */
  read(tx: EntityManager, tenant: TenantScope, resourceId: string, forUpdate?: boolean): Promise<Snapshot | null>;
  /** Puts a snapshot back (null: no override) on undo and redo. */
  write(tx: EntityManager, tenant: TenantScope, resourceId: string, snapshot: Snapshot | null): Promise<void>;
}

/**
 * The undoable-command parts every per-tenant AI override shares (loop override, mutation policy,
 * runtime settings and allowlist): the action log entry records the tenant, the snapshot is the tenant's
 * row before and after, and undo or redo writes it back in that tenant. Spread it into the command
 * definitions (`{...tenantOverrideCommand(store), id, label, actionType, execute}`).
 */
export function tenantOverrideCommand<TInput>(store: TenantOverrideStore<TInput>) {
  return {
    resourceKind: store.resourceKind,
    features: store.features,
    targetId: store.targetId,
    snapshotScope: (auth: AuthContext): SnapshotScope => ({ tenantId: auth.tenantId }),
    snapshot: (tx: EntityManager, resourceId: string, options?: { forUpdate?: boolean; tenantId?: string | null }) =>
      options?.tenantId ? store.read(tx, systemScope(options.tenantId), resourceId, options.forUpdate) : Promise.resolve(null),
    restore: (tx: EntityManager, resourceId: string, snapshot: Snapshot | null, scope?: SnapshotScope): Promise<void> => {
      if (!scope?.tenantId) throw new Error(`a ${store.resourceKind} entry always records its tenant`);
      return store.write(tx, systemScope(scope.tenantId), resourceId, snapshot);
    },
  };
}
