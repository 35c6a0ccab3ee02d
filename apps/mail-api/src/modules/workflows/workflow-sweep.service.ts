import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { WorkflowExecutionsRepository } from './workflow-executions.repository.js';
import { WorkflowStepsRepository, type SweptStep } from './workflow-steps.repository.js';
import { WorkflowTriggerService } from './workflow-trigger.service.js';
import { WorkflowsQueue, type StepJob } from './workflows.queue.js';

/** Step rows read per page, and pages per run (the rest waits for the next run). */
const PAGE = 1000;
const MAX_PAGES = 20;
/** How far back missed starts and resumes are looked for. */
const CATCH_UP_SECONDS = 15 * 60;
const CATCH_UP_LIMIT = 1000;

/** The job a row needs now: its next attempt, its timer, or its resume. */
function jobFor(row: SweptStep): StepJob {
  const base = { stepRowId: row.id, executionId: row.execution_id, projectId: row.project_id };
  if (row.status === 'WAITING') return { ...base, phase: row.resumed ? 'ev' : 'due' };
  return { ...base, phase: `a${row.attempts}` };
}

/**
 * Rebuilds the workflow queue from Postgres (repeatable, every MAIL_WORKFLOW_SWEEP_SECONDS): after a
 * Redis flush or a lost add, every step row that is due (PENDING or WAITING past `due_at`, resumed
 * waits, RUNNING webhook attempts whose worker died) gets its job again, under the same deterministic
 * id, so a job that still exists is not doubled. It also catches up what the track hook missed: starts
 * (an event committed and the process died before the hook, or a stale trigger cache) and resumes (an
 * event that committed while a wait was being written), within the last 15 minutes. Idempotent: every
 * row it touches is gated by its status when the job runs.
 */
@Injectable()
export class WorkflowSweep {
  private readonly logger = new Logger(WorkflowSweep.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly executions: WorkflowExecutionsRepository,
    private readonly steps: WorkflowStepsRepository,
    private readonly triggers: WorkflowTriggerService,
    private readonly queue: WorkflowsQueue,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {}

  /**
   * How long a due row (or a committed event) is left to its own job before the sweep steps in: one
   * sweep interval, from 2 to 30 seconds.
   */
  private get graceSeconds(): number {
    return Math.min(30, Math.max(2, this.config.workflows.sweepSeconds));
  }

  async sweep(): Promise<{ started: number; resumed: number; requeued: number }> {
    const since = new Date(Date.now() - CATCH_UP_SECONDS * 1000);
    const missed = await this.executions.missedStartEvents(this.dataSource, {
      since,
      settleSeconds: this.graceSeconds,
      limit: CATCH_UP_LIMIT,
      maxRunsPerDay: this.config.workflows.maxRunsPerDay,
    });
    // The same start as the trigger's, under the same rules (own emails, run cap).
    const started = await this.triggers.startExecutions(this.dataSource, missed);
    const resumed = await this.steps.resumeMissed(this.dataSource, { windowSeconds: CATCH_UP_SECONDS, limit: CATCH_UP_LIMIT });
    await this.queue.enqueue([
      ...started.map((s) => ({ ...s, phase: 'a0' as const })),
      ...resumed.map((s) => ({ ...s, phase: 'ev' as const })),
    ]);
    let requeued = 0;
    let after: { dueAt: string; id: string } | null = null;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const rows = await this.steps.due(this.dataSource, { graceSeconds: this.graceSeconds, after, limit: PAGE });
      // A backlog's jobs are still queued: only the missing ones are added again.
      const missing = await this.queue.missing(rows.map(jobFor));
      await this.queue.enqueue(missing);
      requeued += missing.length;
      if (rows.length < PAGE) break;
      const last = rows[rows.length - 1];
      after = { dueAt: last.due_at, id: last.id };
    }
    const result = { started: started.length, resumed: resumed.length, requeued };
    if (result.started + result.resumed + result.requeued > 0) this.logger.warn(result, 'workflow sweep re-queued work');
    return result;
  }
}
