import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { WebhookClient } from './webhook-client.js';
import { WebhookSecretCipher } from './webhook-secret-cipher.js';
import { WEBHOOK_ATTEMPTS, type WebhookStep } from './workflow-definition.js';
import { WorkflowStepsRepository, type StepContextRow } from './workflow-steps.repository.js';
import { WorkflowTransitions } from './workflow-transitions.js';
import type { StepJob } from './workflows.queue.js';

/** What a step run did, as the job's return value (and for the runner's caller to queue). */
export interface StepRunResult {
  outcome: string;
  /** Jobs to add after commit (the next step, a timer, a retry). */
  jobs: StepJob[];
  /** An email row to queue for delivery. */
  emailId?: string;
  /** The row is not due before this (the job waits, without spending an attempt). */
  notBefore?: Date;
}

/** A webhook attempt's claim outlasts its request timeout by this much (the step queue's job lock too). */
export const WEBHOOK_CLAIM_MARGIN_MS = 5000;

/** The JSON sent when the step configures no body. */
export function defaultWebhookBody(ctx: StepContextRow): unknown {
  return {
    event: {
      id: ctx.trigger_event_id,
      name: ctx.trigger_name,
      data: ctx.trigger_data ?? {},
      timestamp: ctx.trigger_at?.toISOString() ?? null,
    },
    contact: { id: ctx.contact_id, email: ctx.contact_email, subscribed: ctx.contact_subscribed, data: ctx.contact_data ?? {} },
    executionId: ctx.execution_id,
    workflowId: ctx.workflow_id,
  };
}

/**
 * A WEBHOOK step: an outside effect, so each attempt is claimed and committed before the request goes
 * out (attempts + 1, a claim of timeout + 5 s). A 2xx completes the step and moves on; a failure gives
 * the row back due after the backoff (MAIL_WEBHOOK_RETRY_BASE_MS doubled per attempt) with a job for
 * the next attempt; the 5th failure ends the step and the execution FAILED. A worker that dies
 * mid-request leaves the claim to lapse: that attempt counts, and the sweep (or BullMQ's stalled job)
 * makes the next. The receiver sees the same `X-Webhook-Id` on every attempt of one visit.
 */
@Injectable()
export class WorkflowWebhookStep {
  private readonly logger = new Logger(WorkflowWebhookStep.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly steps: WorkflowStepsRepository,
    private readonly transitions: WorkflowTransitions,
    private readonly client: WebhookClient,
    private readonly secrets: WebhookSecretCipher,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {}

  async attempt(scope: ProjectScope, ctx: StepContextRow, step: WebhookStep): Promise<StepRunResult> {
    const claimed = await this.steps.claimAttempt(this.dataSource, scope, {
      id: ctx.id,
      lockMs: this.config.workflows.webhookTimeoutMs + WEBHOOK_CLAIM_MARGIN_MS,
      maxAttempts: WEBHOOK_ATTEMPTS,
    });
    if (!claimed) return this.notClaimed(scope, ctx);
    const attempt = claimed.attempts;
    const result = await this.client.send({
      url: step.config.url,
      method: step.config.method,
      headers: step.config.headers ?? {},
      body: JSON.stringify(step.config.body !== undefined ? step.config.body : defaultWebhookBody(ctx)),
      secret: this.secrets.open(ctx.webhook_secret, { projectId: scope.projectId, workflowId: ctx.workflow_id }),
      deliveryId: `${ctx.execution_id}.${ctx.step_id}.${ctx.seq}`,
      attempt,
    });
    if (result.ok) return this.succeeded(scope, ctx, step, { attempt, status: result.status });
    this.logger.warn({ executionId: ctx.execution_id, stepId: ctx.step_id, attempt, error: result.error }, 'webhook attempt failed');
    if (attempt >= WEBHOOK_ATTEMPTS) return this.failed(scope, ctx, { attempt, status: result.status ?? null, error: result.error });
    return this.retryLater(scope, ctx, { attempt, error: result.error });
  }

  /** 2xx: the step completes and the execution moves on, fenced by this attempt. */
  private async succeeded(scope: ProjectScope, ctx: StepContextRow, step: WebhookStep, input: { attempt: number; status: number }) {
    const next = await this.dataSource.transaction(async (tx) => {
      const done = await this.steps.finish(tx, scope, {
        id: ctx.id,
        status: 'COMPLETED',
        outcome: { status: input.status, attempts: input.attempt },
        attempts: input.attempt,
      });
      return done ? this.transitions.apply(tx, scope, ctx, { kind: 'next', stepId: step.next }) : null;
    });
    return { outcome: `webhook answered ${input.status}`, jobs: next ? [{ ...next, phase: 'a0' as const }] : [] };
  }

  /** The last attempt failed: the step and the execution end FAILED. */
  private async failed(scope: ProjectScope, ctx: StepContextRow, input: { attempt: number; status: number | null; error: string }) {
    const error = `webhook failed after ${input.attempt} attempts: ${input.error}`;
    await this.dataSource.transaction(async (tx) => {
      const failed = await this.steps.finish(tx, scope, {
        id: ctx.id,
        status: 'FAILED',
        outcome: { status: input.status, attempts: input.attempt },
        error,
        attempts: input.attempt,
      });
      if (failed) await this.transitions.apply(tx, scope, ctx, { kind: 'fail', error });
    });
    return { outcome: error, jobs: [] };
  }

  /** The row goes back to PENDING, due after the backoff, with a job for the next attempt. */
  private async retryLater(scope: ProjectScope, ctx: StepContextRow, input: { attempt: number; error: string }): Promise<StepRunResult> {
    const delayMs = this.config.workflows.webhookRetryBaseMs * 2 ** (input.attempt - 1);
    const released = await this.steps.release(this.dataSource, scope, { id: ctx.id, attempts: input.attempt, delayMs, error: input.error });
    const retry: StepJob = {
      stepRowId: ctx.id,
      executionId: ctx.execution_id,
      projectId: scope.projectId,
      phase: `a${input.attempt}`,
      delayMs,
    };
    return { outcome: `webhook attempt ${input.attempt} failed: ${input.error}`, jobs: released ? [retry] : [] };
  }

  /** Another run holds the attempt, or the row is not due yet, or the last attempt's worker died. */
  private async notClaimed(scope: ProjectScope, ctx: StepContextRow): Promise<StepRunResult> {
    if (ctx.status === 'RUNNING' && ctx.claim_lapsed && ctx.attempts >= WEBHOOK_ATTEMPTS) {
      const error = `webhook failed after ${ctx.attempts} attempts: the last one did not finish`;
      await this.dataSource.transaction((tx) => this.transitions.fail(tx, scope, ctx, error));
      return { outcome: error, jobs: [] };
    }
    if (ctx.status === 'PENDING' && !ctx.is_due) return { outcome: 'not due yet', jobs: [], notBefore: ctx.due_at };
    return { outcome: 'attempt held by another run', jobs: [] };
  }
}
