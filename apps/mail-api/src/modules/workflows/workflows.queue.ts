import { Inject, Injectable } from '@nestjs/common';
import type { JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { QueueService, REDIS } from '@app/service-kit';
import type { DueStep } from './workflow-executions.repository.js';

/**
 * Workflow steps, one job per step visit (and per WEBHOOK attempt, DELAY/WAIT timer and resume). A job
 * only says "look at this step row now": the row's status in Postgres decides what, if anything, runs
 * (WorkflowRunner), so duplicates, re-adds by the sweep and BullMQ's at-least-once delivery are harmless.
 */
export const WORKFLOW_QUEUE = 'mail-workflow';

export const MailWorkflowJob = {
  /** Run, time out or resume one step row (idempotent on the row's status). */
  Step: 'workflow.step',
  /**
   * Start the executions and resume the waits that committed events call for (staged fan-out: /v1/track
   * adds one such job per batch, the worker does the set-based work and adds the step jobs).
   */
  Trigger: 'workflow.trigger',
} as const;

/** Events of one trigger job (a /v1/track batch holds at most 200). */
export const MAX_TRIGGER_EVENTS = 1000;

export interface MailWorkflowTriggerPayload {
  eventIds: string[];
}

export interface MailWorkflowStepPayload {
  projectId: string;
  executionId: string;
  stepRowId: string;
}

/**
 * Why a job is added: the first run of a visit or its WEBHOOK attempt `n` (`a<n>`), the timer of a
 * DELAY/WAIT (`due`), an event that resumes a WAIT (`ev`). Each phase has its own job id, so a timer
 * already delayed in Redis does not swallow the resume, and the sweep re-adds exactly the job that is
 * missing (BullMQ ignores an add whose id exists).
 */
export type StepPhase = `a${number}` | 'due' | 'ev';

export interface StepJob extends DueStep {
  phase: StepPhase;
  /** Run no earlier than this many ms from now. */
  delayMs?: number;
}

export function stepJobId(job: Pick<StepJob, 'stepRowId' | 'phase'>): string {
  return `wfs_${job.stepRowId}_${job.phase}`;
}

/**
 * Retries cover transient failures (database, a step row written in a transaction that has not
 * committed yet); a job that runs out is dropped and the sweep re-adds it while its row is due.
 * Finished jobs are removed at once, so that re-add is never swallowed by a finished job of the same id.
 */
function stepJobOptions(job: StepJob): JobsOptions {
  return {
    jobId: stepJobId(job),
    delay: job.delayMs && job.delayMs > 0 ? Math.ceil(job.delayMs) : undefined,
    attempts: 5,
    backoff: { type: 'exponential', delay: 1000 },
    removeOnComplete: true,
    removeOnFail: true,
  };
}

/** Producer of the workflow queue (the track hook, system events, the runner and the sweep). */
@Injectable()
export class WorkflowsQueue {
  constructor(
    private readonly queues: QueueService,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  /** One trigger job for committed events (its id from the first event: a duplicate add collapses). */
  async enqueueTrigger(eventIds: readonly string[]): Promise<void> {
    for (let i = 0; i < eventIds.length; i += MAX_TRIGGER_EVENTS) {
      const chunk = eventIds.slice(i, i + MAX_TRIGGER_EVENTS);
      await this.queues.queue(WORKFLOW_QUEUE).add(MailWorkflowJob.Trigger, { eventIds: chunk } satisfies MailWorkflowTriggerPayload, {
        jobId: `wft_${chunk[0]}`,
        attempts: 5,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: true,
        removeOnFail: true,
      });
    }
  }

  /** One round trip for the whole batch. The rows must be committed first (or about to be: see the runner's retry). */
  async enqueue(jobs: readonly StepJob[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.queues.queue(WORKFLOW_QUEUE).addBulk(
      jobs.map((job) => ({
        name: MailWorkflowJob.Step,
        data: { projectId: job.projectId, executionId: job.executionId, stepRowId: job.stepRowId } satisfies MailWorkflowStepPayload,
        opts: stepJobOptions(job),
      })),
    );
  }

  /** The jobs among `jobs` that are not in Redis (in any state), in one pipelined round trip. */
  async missing(jobs: readonly StepJob[]): Promise<StepJob[]> {
    if (jobs.length === 0) return [];
    const queue = this.queues.queue(WORKFLOW_QUEUE);
    const pipeline = this.redis.pipeline();
    for (const job of jobs) pipeline.exists(queue.toKey(stepJobId(job)));
    const results = (await pipeline.exec()) ?? [];
    return jobs.filter((_, i) => results[i]?.[1] !== 1);
  }
}
