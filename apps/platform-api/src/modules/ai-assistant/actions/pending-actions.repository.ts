import { Injectable } from '@nestjs/common';
import { type Db, execute, query, queryOne, isoTimestamp } from '@app/service-kit';
import type { TenantScope } from '../../../core/scope/tenant-scope.js';

export const PENDING_ACTION_STATUSES = ['pending', 'cancelled', 'expired', 'confirmed', 'failed', 'executing'] as const;
export type PendingActionStatus = (typeof PENDING_ACTION_STATUSES)[number];

/** A pending action as stored (camelCase); the service serializes the public part. */
export interface PendingActionRow {
  id: string;
  tenantId: string;
  organizationId: string | null;
  agentId: string;
  toolName: string;
  status: PendingActionStatus;
  targetEntityType: string | null;
  targetRecordId: string | null;
  fieldDiff: Record<string, { from: unknown; to: unknown }>;
  recordVersion: number | null;
  attachmentIds: string[];
  normalizedInput: unknown;
  sessionId: string | null;
  createdByUserId: string;
  idempotencyKey: string;
  executionResult: Record<string, unknown> | null;
  createdAt: string;
  expiresAt: string;
  resolvedAt: string | null;
  resolvedByUserId: string | null;
  /** The confirm that holds the action while `executing` (its claim); kept on an interrupted failure. */
  executionClaimId: string | null;
}

interface PendingActionDbRow {
  id: string;
  tenant_id: string;
  organization_id: string | null;
  agent_id: string;
  tool_name: string;
  status: PendingActionStatus;
  target_entity_type: string | null;
  target_record_id: string | null;
  field_diff: Record<string, { from: unknown; to: unknown }>;
  record_version: number | null;
  attachment_ids: string[];
  normalized_input: unknown;
  session_id: string | null;
  created_by_user_id: string;
  idempotency_key: string;
  execution_result: Record<string, unknown> | null;
  created_at: string;
  expires_at: string;
  resolved_at: string | null;
  resolved_by_user_id: string | null;
  execution_claim_id: string | null;
}

export interface NewPendingAction {
  organizationId: string | null;
  agentId: string;
  toolName: string;
  targetEntityType: string;
  targetRecordId: string;
  fieldDiff: Record<string, { from: unknown; to: unknown }>;
  recordVersion: number | null;
  attachmentIds: string[];
  normalizedInput: unknown;
  sessionId: string | null;
  createdByUserId: string;
  idempotencyKey: string;
  ttlSeconds: number;
}

const COLUMNS = `id, tenant_id, organization_id, agent_id, tool_name, status, target_entity_type, target_record_id,
  field_diff, record_version, attachment_ids, normalized_input, session_id, created_by_user_id, idempotency_key,
  execution_result, ${isoTimestamp('created_at')} AS created_at, ${isoTimestamp('expires_at')} AS expires_at,
  ${isoTimestamp('resolved_at')} AS resolved_at, resolved_by_user_id, execution_claim_id`;

function toRow(r: PendingActionDbRow): PendingActionRow {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    organizationId: r.organization_id,
    agentId: r.agent_id,
    toolName: r.tool_name,
    status: r.status,
    targetEntityType: r.target_entity_type,
    targetRecordId: r.target_record_id,
    fieldDiff: r.field_diff,
    recordVersion: r.record_version,
    attachmentIds: r.attachment_ids,
    normalizedInput: r.normalized_input,
    sessionId: r.session_id,
    createdByUserId: r.created_by_user_id,
    idempotencyKey: r.idempotency_key,
    executionResult: r.execution_result,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    resolvedAt: r.resolved_at,
    resolvedByUserId: r.resolved_by_user_id,
    executionClaimId: r.execution_claim_id,
  };
}

/** A claim of a confirm on an action: which action, and which claim (a recovered claim matches nothing). */
export interface ExecutionClaim {
  id: string;
  claimId: string;
}

/**
 * The recovery of actions whose confirm crashed: `executing` past its lease (or, claimed before leases
 * existed, past its expiry by a lease). Never started: back to `pending` (its expiry at least
 * `$5` seconds away), unless the same proposal is pending again as another action; may have run (the
 * start was committed, or unknown): `failed` with `executionResult.error.code = "interrupted"`.
 */
const RECOVER_INTERRUPTED_SQL = `
  WITH due AS (
    SELECT id, tenant_id, idempotency_key, created_at, execution_started_at, execution_claim_id
      FROM ai_pending_actions
     WHERE status = 'executing'
       AND (execution_lease_until < now()
            OR (execution_claim_id IS NULL AND expires_at < now() - make_interval(secs => $2)))
     ORDER BY execution_lease_until NULLS FIRST
     LIMIT $1
       FOR UPDATE SKIP LOCKED
  ), decided AS (
    SELECT d.id AS action_id,
           d.execution_claim_id IS NOT NULL AND d.execution_started_at IS NULL AS never_started,
           d.execution_claim_id IS NOT NULL AND d.execution_started_at IS NULL
             AND row_number() OVER (PARTITION BY d.tenant_id, d.idempotency_key ORDER BY d.created_at DESC) = 1
             AND NOT EXISTS (SELECT 1 FROM ai_pending_actions p
                              WHERE p.tenant_id = d.tenant_id AND p.idempotency_key = d.idempotency_key AND p.status = 'pending')
             AS back_to_pending
      FROM due d
  )
  UPDATE ai_pending_actions
     SET status = CASE WHEN x.back_to_pending THEN 'pending' ELSE 'failed' END,
         execution_result = CASE WHEN x.back_to_pending THEN NULL
                                 ELSE jsonb_build_object('error', jsonb_build_object('code', 'interrupted',
                                        'message', CASE WHEN x.never_started THEN $3 ELSE $4 END)) END,
         resolved_at = CASE WHEN x.back_to_pending THEN NULL ELSE now() END,
         resolved_by_user_id = CASE WHEN x.back_to_pending THEN NULL ELSE resolved_by_user_id END,
         expires_at = CASE WHEN x.back_to_pending THEN GREATEST(expires_at, now() + make_interval(secs => $5)) ELSE expires_at END,
         execution_claim_id = CASE WHEN x.back_to_pending THEN NULL ELSE execution_claim_id END,
         execution_started_at = CASE WHEN x.back_to_pending THEN NULL ELSE execution_started_at END,
         execution_lease_until = NULL
    FROM decided x
   WHERE ai_pending_actions.id = x.action_id AND ai_pending_actions.status = 'executing'
  RETURNING ${COLUMNS}`;

/**
 * The one writer of `ai_pending_actions`. Every move of the state machine is one conditional UPDATE
 * (`WHERE status = ...`), so two requests (or a request and the expiry job) never both make it.
 */
@Injectable()
export class PendingActionsRepository {
  /**
   * A new pending action, or the one still pending with the same idempotency key (the same proposal
   * made twice), its preview refreshed. `inserted` says which. Null when the row holding the key is
   * past expiry but not yet marked so.
   */
  async insertOrReuse(db: Db, scope: TenantScope, input: NewPendingAction): Promise<{ row: PendingActionRow; inserted: boolean } | null> {
    const found = await queryOne<PendingActionDbRow & { inserted: boolean }>(
      db,
      `INSERT INTO ai_pending_actions (tenant_id, organization_id, agent_id, tool_name, target_entity_type, target_record_id,
              field_diff, record_version, attachment_ids, normalized_input, session_id, created_by_user_id, idempotency_key, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9::text[], $10::jsonb, $11, $12, $13, now() + make_interval(secs => $14))
       ON CONFLICT (tenant_id, idempotency_key) WHERE status = 'pending'
       DO UPDATE SET target_entity_type = EXCLUDED.target_entity_type, target_record_id = EXCLUDED.target_record_id,
                     field_diff = EXCLUDED.field_diff, record_version = EXCLUDED.record_version
       WHERE ai_pending_actions.expires_at > now()
       RETURNING ${COLUMNS}, (xmax = 0) AS inserted`,
      [
        scope.tenantId,
        input.organizationId,
        input.agentId,
        input.toolName,
        input.targetEntityType,
        input.targetRecordId,
        JSON.stringify(input.fieldDiff),
        input.recordVersion,
        input.attachmentIds,
        JSON.stringify(input.normalizedInput),
        input.sessionId,
        input.createdByUserId,
        input.idempotencyKey,
        input.ttlSeconds,
      ],
    );
    // null: the row holding the key is pending but past expiry (the caller expires it and tries again).
    return found ? { row: toRow(found), inserted: found.inserted } : null;
  }

  /** Marks the scope's pending row with this key expired when it is past expiry (before a new proposal takes the key). */
  async expireByKey(db: Db, scope: TenantScope, idempotencyKey: string): Promise<PendingActionRow[]> {
    const rows = await query<PendingActionDbRow>(
      db,
      `UPDATE ai_pending_actions SET status = 'expired', resolved_at = now()
        WHERE tenant_id = $1 AND idempotency_key = $2 AND status = 'pending' AND expires_at <= now()
       RETURNING ${COLUMNS}`,
      [scope.tenantId, idempotencyKey],
    );
    return rows.map(toRow);
  }

  /**
   * The action if the scope may see it: its tenant, and its creator unless `anyCreator` (a super
   * administrator). Anything else is the same null as an unknown id.
   */
  async find(db: Db, scope: TenantScope, input: { id: string; anyCreator: boolean }): Promise<PendingActionRow | null> {
    const row = await queryOne<PendingActionDbRow>(
      db,
      `SELECT ${COLUMNS} FROM ai_pending_actions
        WHERE id = $1 AND tenant_id = $2 AND ($3::boolean OR created_by_user_id = $4)`,
      [input.id, scope.tenantId, input.anyCreator, scope.userId],
    );
    return row ? toRow(row) : null;
  }

  /** pending -> cancelled, only while not past expiry. */
  async cancel(db: Db, scope: TenantScope, input: { id: string; reason: string | null }): Promise<PendingActionRow | null> {
    const row = await queryOne<PendingActionDbRow>(
      db,
      `UPDATE ai_pending_actions
          SET status = 'cancelled', resolved_at = now(), resolved_by_user_id = $3, cancel_reason = $4
        WHERE id = $1 AND tenant_id = $2 AND status = 'pending' AND expires_at > now()
       RETURNING ${COLUMNS}`,
      [input.id, scope.tenantId, scope.userId, input.reason],
    );
    return row ? toRow(row) : null;
  }

  /** pending -> expired for one row past expiry (a confirm or cancel that found it so). */
  async expireOne(db: Db, scope: TenantScope, id: string): Promise<PendingActionRow | null> {
    const row = await queryOne<PendingActionDbRow>(
      db,
      `UPDATE ai_pending_actions SET status = 'expired', resolved_at = now()
        WHERE id = $1 AND tenant_id = $2 AND status = 'pending' AND expires_at <= now()
       RETURNING ${COLUMNS}`,
      [id, scope.tenantId],
    );
    return row ? toRow(row) : null;
  }

  /**
   * The atomic claim: pending -> executing while not past expiry, with a new claim id and a lease of
   * `leaseSeconds`. Of two concurrent confirms exactly one gets the row back; the other gets null and
   * reads the outcome.
   */
  async claim(db: Db, scope: TenantScope, input: { id: string; leaseSeconds: number }): Promise<PendingActionRow | null> {
    const row = await queryOne<PendingActionDbRow>(
      db,
      `UPDATE ai_pending_actions
          SET status = 'executing', resolved_by_user_id = $3, execution_claim_id = gen_random_uuid(),
              execution_lease_until = now() + make_interval(secs => $4), execution_started_at = NULL
        WHERE id = $1 AND tenant_id = $2 AND status = 'pending' AND expires_at > now()
       RETURNING ${COLUMNS}`,
      [input.id, scope.tenantId, scope.userId, input.leaseSeconds],
    );
    return row ? toRow(row) : null;
  }

  /**
   * Commits that the tool is about to run (from here on a crash means it may have run), renewing the
   * lease. False when the claim is no longer held (recovered after its lease lapsed): the tool must not run.
   */
  async markStarted(db: Db, scope: TenantScope, input: ExecutionClaim & { leaseSeconds: number }): Promise<boolean> {
    const n = await execute(
      db,
      `UPDATE ai_pending_actions SET execution_started_at = now(), execution_lease_until = now() + make_interval(secs => $4)
        WHERE id = $1 AND tenant_id = $2 AND execution_claim_id = $3 AND status = 'executing'`,
      [input.id, scope.tenantId, input.claimId, input.leaseSeconds],
    );
    return n > 0;
  }

  /** Extends the lease of a claim still held while its tool runs; false when it is not held any more. */
  async renewLease(db: Db, scope: TenantScope, input: ExecutionClaim & { leaseSeconds: number }): Promise<boolean> {
    const n = await execute(
      db,
      `UPDATE ai_pending_actions SET execution_lease_until = now() + make_interval(secs => $4)
        WHERE id = $1 AND tenant_id = $2 AND execution_claim_id = $3 AND status = 'executing'`,
      [input.id, scope.tenantId, input.claimId, input.leaseSeconds],
    );
    return n > 0;
  }

  /** executing -> pending: the claim is given back (the tool refused before changing anything). */
  async release(db: Db, scope: TenantScope, input: ExecutionClaim): Promise<void> {
    await execute(
      db,
      `UPDATE ai_pending_actions
          SET status = 'pending', resolved_by_user_id = NULL, execution_claim_id = NULL, execution_lease_until = NULL,
              execution_started_at = NULL
        WHERE id = $1 AND tenant_id = $2 AND execution_claim_id = $3 AND status = 'executing'`,
      [input.id, scope.tenantId, input.claimId],
    );
  }

  /**
   * executing -> confirmed or failed, with the tool's result (or error). A claim recovered as
   * `interrupted` while its tool was still running (its process stalled past the lease) gets the
   * tool's real outcome when it comes.
   */
  async finish(
    db: Db,
    scope: TenantScope,
    input: ExecutionClaim & { status: 'confirmed' | 'failed'; executionResult: Record<string, unknown> },
  ): Promise<PendingActionRow | null> {
    const row = await queryOne<PendingActionDbRow>(
      db,
      `UPDATE ai_pending_actions
          SET status = $4, execution_result = $5::jsonb, resolved_at = now(), execution_lease_until = NULL
        WHERE id = $1 AND tenant_id = $2 AND execution_claim_id = $3
          AND (status = 'executing' OR (status = 'failed' AND execution_result -> 'error' ->> 'code' = 'interrupted'))
       RETURNING ${COLUMNS}`,
      [input.id, scope.tenantId, input.claimId, input.status, JSON.stringify(input.executionResult)],
    );
    return row ? toRow(row) : null;
  }

  /** The recovery job (any tenant): up to `limit` actions whose confirm crashed (RECOVER_INTERRUPTED_SQL). */
  async recoverInterrupted(
    db: Db,
    input: { limit: number; legacyGraceSeconds: number; pendingGraceSeconds: number; messages: { notRun: string; mayHaveRun: string } },
  ): Promise<PendingActionRow[]> {
    const rows = await query<PendingActionDbRow>(db, RECOVER_INTERRUPTED_SQL, [
      input.limit,
      input.legacyGraceSeconds,
      input.messages.notRun,
      input.messages.mayHaveRun,
      input.pendingGraceSeconds,
    ]);
    return rows.map(toRow);
  }

  /**
   * The expiry job: up to `limit` pending rows past expiry (any tenant) become expired, oldest first;
   * rows locked by a concurrent confirm or cancel are left for the next run. The pick is a MATERIALIZED
   * CTE, run exactly once: as a subquery of the UPDATE, Postgres planned it as the inner side of a
   * nested loop on a fresh table and re-ran it per pending row, each run locking the next `limit` rows
   * (a run asked for 1 expired 400: ai-actions-expiry-limit.spec).
   */
  async expireDue(db: Db, input: { limit: number }): Promise<PendingActionRow[]> {
    const rows = await query<PendingActionDbRow>(
      db,
      `WITH picked AS MATERIALIZED (
         SELECT id FROM ai_pending_actions
          WHERE status = 'pending' AND expires_at <= now()
          ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED
       )
       UPDATE ai_pending_actions SET status = 'expired', resolved_at = now()
        WHERE id IN (SELECT id FROM picked) AND status = 'pending'
       RETURNING ${COLUMNS}`,
      [input.limit],
    );
    return rows.map(toRow);
  }

  /** Of `ids` (UUIDs, checked when the action was stored), those that are no attachment of the scope's tenant. */
  async attachmentsOutsideTenant(db: Db, scope: TenantScope, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await query<{ id: string }>(
      db,
      `SELECT wanted.id::text AS id FROM unnest($2::uuid[]) AS wanted(id)
        WHERE NOT EXISTS (SELECT 1 FROM attachments a WHERE a.id = wanted.id AND a.tenant_id = $1)`,
      [scope.tenantId, ids],
    );
    return rows.map((r) => r.id);
  }
}
