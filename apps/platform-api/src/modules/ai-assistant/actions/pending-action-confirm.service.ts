import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../../config/platform-config.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { scopeOf } from '../../../core/scope/tenant-scope.js';
import type { AgentDefinition, MutationTool } from '../agents/agent-definition.js';
import { AgentRegistry } from '../agents/agent-registry.js';
import { MutationPolicyService } from '../overrides/mutation-policy.service.js';
import { PendingActionEvents } from './pending-action-events.js';
import { serializePendingAction, type SerializedPendingAction } from './pending-action-serializer.js';
import { type ExecutionClaim, type PendingActionRow, PendingActionsRepository } from './pending-actions.repository.js';
import { expiredError, invalidStatusError, PendingActionsService } from './pending-actions.service.js';

/** The confirm answer: the action, and the tool's result (or its error) as stored in `executionResult`. */
export interface ConfirmResult {
  ok: boolean;
  pendingAction: SerializedPendingAction;
  mutationResult: Record<string, unknown> | null;
}

/** How long a confirm that lost the claim waits for the winner's outcome before answering 409. */
const WAIT_FOR_OUTCOME_MS = 5000;

const staleVersion = (message: string) => new DomainError('stale_version', message, { status: 412 });
const schemaDrift = () => new DomainError('schema_drift', 'the tool no longer accepts the stored input', { status: 412 });

function isStaleVersion(err: unknown): boolean {
  return err instanceof DomainError && err.code === 'stale_version';
}

/**
 * POST /ai_assistant/ai/actions/{id}/confirm. The checks run in the spec's order (status, expiry,
 * agent registration, required features, mutation policy, tool whitelist, attachment tenant scope,
 * record version, input-schema drift); then one conditional UPDATE claims the action (pending ->
 * executing), so of two concurrent confirms exactly one runs the tool. The other waits for the
 * outcome (up to 5 s) and answers it as a repeated confirm does, without running the tool again.
 *
 * Crash safety: the claim is a lease (AI_PENDING_ACTION_LEASE_SECONDS) renewed while the tool runs,
 * and the moment the tool starts is committed before it runs. If this process dies, the worker's
 * recovery (PendingActionsJobs) finds the lapsed lease: `pending` again when the tool never started,
 * `failed` (`interrupted`) when it may have run; so a confirm never answers 409 forever.
 */
@Injectable()
export class PendingActionConfirmService {
  private readonly logger = new Logger(PendingActionConfirmService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly registry: AgentRegistry,
    private readonly repository: PendingActionsRepository,
    private readonly actions: PendingActionsService,
    private readonly policies: MutationPolicyService,
    private readonly events: PendingActionEvents,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {}

  private get leaseSeconds(): number {
    return this.config.aiPendingActionLeaseSeconds;
  }

  async confirm(auth: AuthContext, id: string): Promise<ConfirmResult> {
    let row = await this.actions.findOrThrow(auth, id);
    // A lost claim re-reads the row once or twice (it then is settled, executing or expired).
    for (let round = 0; round < 3; round += 1) {
      const settled = await this.settledOutcome(auth, row);
      if (settled) return settled;
      const { tool, input } = await this.check(auth, row);
      const claimed = await this.repository.claim(this.dataSource, scopeOf(auth), { id: row.id, leaseSeconds: this.leaseSeconds });
      const outcome = claimed && (await this.run(auth, claimed, tool, input));
      if (outcome) return outcome;
      // Lost the claim (a concurrent confirm or cancel, the expiry, or a recovery of a claim that
      // stalled past its lease before the tool started): decide again on what is stored now.
      row = await this.actions.findOrThrow(auth, id);
      if (row.status === 'pending') await this.actions.expireIfDue(auth, row.id);
    }
    throw new DomainError('confirmation_in_progress', 'the action is being changed by another request', { status: 409 });
  }

  /**
   * The answer when the action is no longer pending: the stored outcome of `confirmed` and `failed`
   * (the tool never runs again), the outcome of an `executing` one once it ends; 409 otherwise.
   */
  private async settledOutcome(auth: AuthContext, row: PendingActionRow): Promise<ConfirmResult | null> {
    if (row.status === 'executing') row = await this.waitForOutcome(auth, row);
    switch (row.status) {
      case 'pending':
        return null;
      case 'confirmed':
      case 'failed':
        return { ok: row.status === 'confirmed', pendingAction: serializePendingAction(row), mutationResult: row.executionResult };
      case 'expired':
        throw expiredError();
      case 'executing':
        throw new DomainError('confirmation_in_progress', 'the action is being executed by another request', { status: 409 });
      case 'cancelled':
        throw invalidStatusError(row.status);
    }
  }

  private async waitForOutcome(auth: AuthContext, row: PendingActionRow): Promise<PendingActionRow> {
    const deadline = Date.now() + WAIT_FOR_OUTCOME_MS;
    let delay = 20;
    while (row.status === 'executing' && Date.now() < deadline) {
      await sleep(delay);
      delay = Math.min(delay * 2, 200);
      row = await this.actions.findOrThrow(auth, row.id);
    }
    return row;
  }

  /** The checks of the spec, in its order; the parsed input for the tool when all pass. */
  private async check(auth: AuthContext, row: PendingActionRow): Promise<{ tool: MutationTool; input: unknown }> {
    await this.actions.expireIfDue(auth, row.id);
    const agent = this.registry.getOrThrow(row.agentId);
    if (!auth.can(...agent.requiredFeatures)) throw DomainError.forbidden(`missing features of agent ${agent.id}`);
    if ((await this.policies.effective(scopeOf(auth), agent.id)) === 'read-only') {
      throw DomainError.forbidden(`agent ${agent.id} is read-only in this tenant`);
    }
    const tool = this.whitelistedTool(auth, agent, row.toolName);
    const outside = await this.repository.attachmentsOutsideTenant(this.dataSource, scopeOf(auth), row.attachmentIds);
    if (outside.length > 0) throw DomainError.forbidden('an attachment of the action is outside your tenant');
    const parsed = tool.inputSchema.safeParse(row.normalizedInput);
    await this.checkRecordVersion(auth, row, tool, parsed.success ? { input: parsed.data } : { drifted: row.normalizedInput });
    if (!parsed.success) throw schemaDrift();
    return { tool, input: parsed.data };
  }

  private whitelistedTool(auth: AuthContext, agent: AgentDefinition, toolName: string): MutationTool {
    const tool = agent.tools.find((t) => t.name === toolName);
    if (!tool || tool.kind !== 'mutation') throw DomainError.forbidden(`tool ${toolName} is not allowed for agent ${agent.id}`);
    if (!auth.can(...tool.requiredFeatures)) throw DomainError.forbidden(`missing features of tool ${tool.name}`);
    return tool;
  }

  /**
   * 412 `stale_version` when the target moved (or went) since the preview. The version is read with the
   * tool's preview; a stored input the schema no longer accepts is still tried (the version check comes
   * first), and if the preview cannot take it, the drift check that follows answers.
   */
  private async checkRecordVersion(
    auth: AuthContext,
    row: PendingActionRow,
    tool: MutationTool,
    stored: { input: unknown } | { drifted: unknown },
  ): Promise<void> {
    if (row.recordVersion === null) return;
    let current: number | null;
    try {
      current = (await tool.preview({ auth }, 'input' in stored ? stored.input : stored.drifted)).recordVersion;
    } catch (err) {
      if (err instanceof DomainError && err.status === 404) throw staleVersion('the record no longer exists');
      if ('drifted' in stored) return;
      throw err;
    }
    if (current !== row.recordVersion) throw staleVersion('the record changed since the preview');
  }

  /**
   * Runs the claimed action's tool. Its result is stored (`confirmed`, event `ai.action.confirmed`);
   * a throw stores `{error: {code, message}}` (`failed`, event `ai.action.failed`), except a stale
   * version found at the write itself, which hands the claim back (still pending) and answers 412.
   * Null when the claim was lost before the tool started (it did not run).
   */
  private async run(auth: AuthContext, claimed: PendingActionRow, tool: MutationTool, input: unknown): Promise<ConfirmResult | null> {
    const scope = scopeOf(auth);
    const claim = { id: claimed.id, claimId: claimed.executionClaimId ?? '' };
    if (!(await this.repository.markStarted(this.dataSource, scope, { ...claim, leaseSeconds: this.leaseSeconds }))) return null;
    let outcome: { status: 'confirmed' | 'failed'; executionResult: Record<string, unknown> };
    try {
      const output = await this.whileLeaseRenewed(auth, claim, () => tool.execute({ auth }, input, claimed.recordVersion));
      const result = output && typeof output === 'object' && !Array.isArray(output) ? { ...output } : { value: output ?? null };
      outcome = { status: 'confirmed', executionResult: result };
    } catch (err) {
      if (isStaleVersion(err)) {
        await this.repository.release(this.dataSource, scope, claim);
        throw err;
      }
      outcome = { status: 'failed', executionResult: { error: this.errorOf(err, claimed) } };
    }
    const finished = await this.repository.finish(this.dataSource, scope, { ...claim, ...outcome });
    if (!finished) throw new Error(`pending action ${claimed.id} left executing by someone else`);
    await this.events.emit(outcome.status, [finished]);
    return {
      ok: outcome.status === 'confirmed',
      pendingAction: serializePendingAction(finished),
      mutationResult: finished.executionResult,
    };
  }

  /** Runs `work`, renewing the claim's lease every third of it, so only a dead process's claim lapses. */
  private async whileLeaseRenewed<T>(auth: AuthContext, claim: ExecutionClaim, work: () => Promise<T>): Promise<T> {
    const renew = () =>
      this.repository
        .renewLease(this.dataSource, scopeOf(auth), { ...claim, leaseSeconds: this.leaseSeconds })
        .then((held) => {
          if (!held) this.logger.warn({ actionId: claim.id }, 'pending action claim lost while its tool runs');
        })
        .catch((err: Error) => this.logger.warn({ actionId: claim.id, err: err.message }, 'pending action lease not renewed'));
    const timer = setInterval(() => void renew(), (this.leaseSeconds * 1000) / 3);
    try {
      return await work();
    } finally {
      clearInterval(timer);
    }
  }

  /** A domain error's own code and message; anything unexpected is logged and reported without its internals. */
  private errorOf(err: unknown, row: PendingActionRow): { code: string; message: string } {
    if (err instanceof DomainError) return { code: err.code, message: err.message };
    this.logger.error({ err, actionId: row.id, tool: row.toolName }, 'pending action tool failed');
    return { code: 'tool_failed', message: `the tool ${row.toolName} failed unexpectedly` };
  }
}
