import type { PendingActionRow, PendingActionStatus } from './pending-actions.repository.js';

/**
 * A pending action as every endpoint answers it: exactly decisions.md's fields. `normalizedInput`,
 * `createdByUserId` and `idempotencyKey` never leave the server (nor the session id or cancel reason).
 */
export interface SerializedPendingAction {
  id: string;
  agentId: string;
  toolName: string;
  status: PendingActionStatus;
  targetEntityType: string | null;
  targetRecordId: string | null;
  fieldDiff: Record<string, { from: unknown; to: unknown }>;
  recordVersion: number | null;
  attachmentIds: string[];
  executionResult: Record<string, unknown> | null;
  createdAt: string;
  expiresAt: string;
  resolvedAt: string | null;
  resolvedByUserId: string | null;
}

/** A pending row past `expiresAt` counts as expired (platform-api.md), even before the expiry job marks it. */
export function serializePendingAction(row: PendingActionRow, now = Date.now()): SerializedPendingAction {
  const status = row.status === 'pending' && Date.parse(row.expiresAt) <= now ? 'expired' : row.status;
  return {
    id: row.id,
    agentId: row.agentId,
    toolName: row.toolName,
    status,
    targetEntityType: row.targetEntityType,
    targetRecordId: row.targetRecordId,
    fieldDiff: row.fieldDiff,
    recordVersion: row.recordVersion,
    attachmentIds: row.attachmentIds,
    executionResult: row.executionResult,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    resolvedAt: row.resolvedAt,
    resolvedByUserId: row.resolvedByUserId,
  };
}
