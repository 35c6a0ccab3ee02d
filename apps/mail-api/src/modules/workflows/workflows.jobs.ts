import { Inject, Injectable, Logger } from '@nestjs/common';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { OnJob, type OwnsQueueWorkerOptions, type QueueWorkerOptions } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { MAINTENANCE_QUEUE, MailMaintenanceJob } from '../maintenance/maintenance.queue.js';
import { WAITING_UNTIL_DUE, WorkflowRunner } from './workflow-runner.service.js';
import { WorkflowSweep } from './workflow-sweep.service.js';
import { WorkflowTriggerService } from './workflow-trigger.service.js';
import { WEBHOOK_CLAIM_MARGIN_MS, type StepRunResult } from './workflow-webhook-step.js';
import {
  MailWorkflowJob,
  WORKFLOW_QUEUE,
  WorkflowsQueue,
  MAX_TRIGGER_EVENTS,
  type MailWorkflowTriggerPayload,
  type MailWorkflowStepPayload,
  type StepJob,
} from './workflows.queue.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Visits one job may run back to back (a long chain of instant steps still yields to other jobs). */
const MAX_CHAINED_STEPS = 20;

/** The next visit's first run when it is the only job a run asks for (not a timer, retry or resume). */
function continuationOf(result: StepRunResult): StepJob | null {
  return result.jobs.length === 1 && result.jobs[0].phase === 'a0' && !result.jobs[0].delayMs ? result.jobs[0] : null;
}

@Injectable()
export class WorkflowsJobs implements OwnsQueueWorkerOptions {
  private readonly logger = new Logger(WorkflowsJobs.name);

  constructor(
    private readonly runner: WorkflowRunner,
    private readonly sweeper: WorkflowSweep,
    private readonly triggers: WorkflowTriggerService,
    private readonly queue: WorkflowsQueue,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {}

  /**
   * Webhook steps wait on the network for up to MAIL_WEBHOOK_TIMEOUT_MS: the step queue runs more at once
   * than the default. A job whose worker died is handed on once the webhook claim it could hold has lapsed
   * (timeout + 5 s, the lock below), not after BullMQ's default 30 s lock and 30 s stall check: the late
   * duplicate of a killed step comes, and finds its row finished, within one claim.
   */
  queueWorkerOptions(queue: string): QueueWorkerOptions | undefined {
    if (queue !== WORKFLOW_QUEUE) return undefined;
    const lockDuration = this.config.workflows.webhookTimeoutMs + WEBHOOK_CLAIM_MARGIN_MS;
    return { concurrency: this.config.workflows.concurrency, lockDuration, stalledInterval: Math.max(1000, Math.floor(lockDuration / 2)) };
  }

  /**
   * One step visit (WorkflowRunner). After the run's transaction commits: the next step's job, timers
   * and retries go to the workflow queue; a SEND_EMAIL's email waits in Postgres for MarketingFeeder
   * (round-robin by project onto the throttled email queue). If an add fails, the rows are committed and the sweeps add the jobs later. A row
   * not due yet makes the job wait (without spending an attempt); a job that fails on its last attempt
   * fails its step and execution.
   */
  @OnJob({ queue: WORKFLOW_QUEUE, name: MailWorkflowJob.Step })
  async step(job: Job<MailWorkflowStepPayload>): Promise<{ outcome: string; steps: number }> {
    const { projectId, executionId, stepRowId } = job.data;
    if (![projectId, executionId, stepRowId].every((id) => UUID.test(id))) throw new UnrecoverableError(`malformed workflow job ${job.id}`);
    let result: StepRunResult;
    try {
      result = await this.runner.run(job.data);
    } catch (err) {
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await this.failLastAttempt(job, err);
      throw err;
    }
    if (result.notBefore && (result.outcome !== WAITING_UNTIL_DUE || job.id?.endsWith('_due'))) {
      await job.moveToDelayed(Math.max(result.notBefore.getTime(), Date.now()) + 50, job.token);
      throw new DelayedError();
    }
    let steps = 1;
    for (;;) {
      // A written email (result.emailId) waits in Postgres for MarketingFeeder, round-robin by project.
      const next = steps < MAX_CHAINED_STEPS ? continuationOf(result) : null;
      if (!next) break;
      result = await this.runChained(next);
      steps += 1;
    }
    await this.queue.enqueue(result.jobs);
    return { outcome: result.outcome, steps };
  }

  /**
   * The next visit of the same execution, run by this job instead of a job of its own (no queue round
   * trip between, say, a CONDITION and the UPDATE_CONTACT it leads to). If it fails, it gets its own job,
   * with its own retries; if this process dies first, its row is due and the sweep queues it.
   */
  private async runChained(next: StepJob): Promise<StepRunResult> {
    try {
      const result = await this.runner.run(next);
      if (!result.notBefore) return result;
      return { outcome: result.outcome, jobs: [{ ...next, delayMs: result.notBefore.getTime() - Date.now() }] };
    } catch (err) {
      this.logger.warn({ stepRowId: next.stepRowId, err: (err as Error).message }, 'chained workflow step failed; it is queued on its own');
      return { outcome: 'next step queued', jobs: [next] };
    }
  }

  /**
   * The executions and resumes of a /v1/track batch's events (WorkflowTriggerService.runTrigger).
   * Idempotent: a second run starts nothing twice (unique (workflow, trigger event)) and resumes nothing
   * twice (only waits not resumed yet).
   */
  @OnJob({ queue: WORKFLOW_QUEUE, name: MailWorkflowJob.Trigger })
  trigger(job: Job<MailWorkflowTriggerPayload>): Promise<{ started: number; resumed: number }> {
    const ids = Array.isArray(job.data.eventIds) ? job.data.eventIds : [];
    if (ids.length > MAX_TRIGGER_EVENTS || !ids.every((id) => typeof id === 'string' && UUID.test(id))) {
      throw new UnrecoverableError(`malformed workflow trigger job ${job.id}`);
    }
    return this.triggers.runTrigger(ids);
  }

  /** Rebuilds missing step jobs from Postgres (repeatable; WorkflowSweep). */
  @OnJob({ queue: MAINTENANCE_QUEUE, name: MailMaintenanceJob.SweepWorkflows })
  sweep(): Promise<{ started: number; resumed: number; requeued: number }> {
    return this.sweeper.sweep();
  }

  private async failLastAttempt(job: Job<MailWorkflowStepPayload>, err: unknown): Promise<void> {
    const error = `step failed after ${job.attemptsMade + 1} tries: ${(err as Error).message}`.slice(0, 1000);
    try {
      await this.runner.failByPayload(job.data, error);
    } catch (failure) {
      this.logger.warn({ jobId: job.id, err: (failure as Error).message }, 'could not record the failed step; the sweep retries it');
    }
  }
}
