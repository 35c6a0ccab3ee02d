import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { MetricsRegistry, type Db } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { withinTransaction } from '../../core/database/within-transaction.js';
import { WorkflowExecutionsRepository, type DueStep, type TriggerEvent } from './workflow-executions.repository.js';
import { WorkflowStepsRepository } from './workflow-steps.repository.js';
import { WorkflowsQueue } from './workflows.queue.js';
import { WorkflowsRepository } from './workflows.repository.js';

/** How long a project's event names are trusted; writes in this process forget them at once. */
const NAMES_TTL_MS = 5000;
/** Projects remembered at most (the map is cleared past it: a reload costs one query per project). */
const MAX_CACHED_PROJECTS = 10_000;

interface ProjectNames {
  /** Trigger event names of the project's enabled workflows. */
  triggers: Set<string>;
  /** Event names WAIT_FOR_EVENT steps of its workflows (enabled or not) wait for. */
  waits: Set<string>;
  loadedAt: number;
}

/**
 * Where events start and resume executions, set-based: one statement starts every execution a set of
 * events calls for (re-entry rules in SQL), one resumes every wait they answer, one `addBulk` queues the
 * step jobs.
 *
 * - /v1/track (`afterTrack`, after a batch commits): the events whose names matter to a workflow of their
 *   project go into ONE trigger job per batch, and the worker runs the statements (`runTrigger`). Tracking
 *   pays a cache lookup per event and at most one Redis add per batch, whatever the number of workflows
 *   and executions (staged fan-out). The names are cached per project for 5 s and forgotten when this
 *   process changes a workflow.
 * - The service's own `email.*` events (`onEvents`, EngagementEventsService): inline, in the caller's
 *   transaction, so the executions commit with the events.
 *
 * What a stale cache, a crash between commit and hook or a lost trigger job misses, the sweep's
 * catch-up starts later (WorkflowSweep).
 *
 * Every start goes through `startExecutions` (decisions.md "Workflow and tracking safety"): a workflow's
 * own emails never start it again, and at most MAIL_WORKFLOW_MAX_RUNS_PER_DAY executions of a workflow
 * start per contact in 24 h, whatever the number of API instances and workers starting at once.
 */
@Injectable()
export class WorkflowTriggerService {
  private readonly logger = new Logger(WorkflowTriggerService.name);
  private readonly names = new Map<string, ProjectNames>();
  /** No labels: a project's or workflow's id would make one series per customer (the log line names them). */
  private readonly skippedStarts: Counter | null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly workflows: WorkflowsRepository,
    private readonly executions: WorkflowExecutionsRepository,
    private readonly steps: WorkflowStepsRepository,
    private readonly queue: WorkflowsQueue,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
    @Optional() metrics?: MetricsRegistry,
  ) {
    this.skippedStarts = metrics
      ? new Counter({
          name: 'mail_workflow_starts_skipped_total',
          help: 'Workflow triggers that started no execution because the contact had MAIL_WORKFLOW_MAX_RUNS_PER_DAY runs of the workflow in 24 h',
          registers: [metrics.registry],
        })
      : null;
  }

  /** The project's workflows changed: the next event reads their names again. */
  invalidate(projectId: string): void {
    this.names.delete(projectId);
  }

  /** Committed /v1/track events: one trigger job for those a workflow may care about. Never throws. */
  async afterTrack(events: readonly TriggerEvent[]): Promise<void> {
    try {
      const relevant = await this.relevant(events);
      if (relevant.length > 0) await this.queue.enqueueTrigger(relevant.map((e) => e.id));
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message, events: events.length },
        'workflow trigger not queued; the workflow sweep catches up',
      );
    }
  }

  /** The trigger job (worker): starts and resumes for committed events, then queues the step jobs. */
  async runTrigger(eventIds: readonly string[]): Promise<{ started: number; resumed: number }> {
    const [started, resumed] = await Promise.all([
      this.startExecutions(this.dataSource, eventIds),
      this.steps.resumeWaiting(this.dataSource, eventIds),
    ]);
    await this.queue.enqueue([
      ...started.map((s) => ({ ...s, phase: 'a0' as const })),
      ...resumed.map((s) => ({ ...s, phase: 'ev' as const })),
    ]);
    return { started: started.length, resumed: resumed.length };
  }

  /**
   * Events being written in the caller's transaction (`db` its EntityManager): executions start and waits
   * resume in it. A step job that runs before the commit does not find its row and is retried by BullMQ
   * until it does (or dropped, if the transaction rolled back).
   */
  async onEvents(db: Db, events: readonly TriggerEvent[]): Promise<void> {
    // Read through the caller's transaction: a second pool connection per open transaction starves the
    // pool once every connection holds a transaction waiting for one.
    const relevant = await this.relevant(events, db);
    if (relevant.length === 0) return;
    const ids = relevant.map((e) => e.id);
    const started = await this.startExecutions(db, ids);
    const resumed = await this.steps.resumeWaiting(db, ids);
    const jobs = [...started.map((s) => ({ ...s, phase: 'a0' as const })), ...resumed.map((s) => ({ ...s, phase: 'ev' as const }))];
    try {
      await this.queue.enqueue(jobs);
    } catch (err) {
      // The rows commit with the caller's transaction, due: the sweep queues them once Redis answers again.
      this.logger.warn({ err: (err as Error).message, jobs: jobs.length }, 'enqueue of workflow steps failed; the sweep re-adds them');
    }
  }

  /**
   * The executions committed events call for, in `db`'s transaction (or one of its own): the run-cap
   * locks of their (workflow, contact) pairs, then the start statement (WorkflowExecutionsRepository
   * says why these are two statements). Triggers past the cap are logged and counted.
   */
  async startExecutions(db: Db, eventIds: readonly string[]): Promise<DueStep[]> {
    if (eventIds.length === 0) return [];
    const { started, skipped } = await withinTransaction(db, async (tx) => {
      await this.executions.lockRunCounters(tx, eventIds);
      return this.executions.startForEvents(tx, { eventIds, maxRunsPerDay: this.config.workflows.maxRunsPerDay });
    });
    if (skipped.length > 0) {
      const triggers = skipped.reduce((sum, s) => sum + s.triggers, 0);
      this.skippedStarts?.inc(triggers);
      this.logger.warn(
        { triggers, maxRunsPerDay: this.config.workflows.maxRunsPerDay, capped: skipped.slice(0, 20) },
        'workflow triggers skipped: the contact reached the run cap of the workflow',
      );
    }
    return started;
  }

  /** The events whose name starts a workflow of their project or is awaited by one. */
  private async relevant(events: readonly TriggerEvent[], db: Db = this.dataSource): Promise<TriggerEvent[]> {
    if (events.length === 0) return [];
    const names = await this.namesOf([...new Set(events.map((e) => e.projectId))], db);
    return events.filter((e) => {
      const project = names.get(e.projectId);
      return project !== undefined && (project.triggers.has(e.name) || project.waits.has(e.name));
    });
  }

  private async namesOf(projectIds: string[], db: Db): Promise<Map<string, ProjectNames>> {
    const now = Date.now();
    const stale = projectIds.filter((id) => {
      const cached = this.names.get(id);
      return !cached || now - cached.loadedAt > NAMES_TTL_MS;
    });
    if (stale.length > 0) {
      if (this.names.size + stale.length > MAX_CACHED_PROJECTS) this.names.clear();
      const fresh = new Map(stale.map((id) => [id, { triggers: new Set<string>(), waits: new Set<string>(), loadedAt: now }]));
      for (const row of await this.workflows.triggerIndex(db, stale)) {
        const entry = fresh.get(row.project_id);
        if (!entry) continue;
        if (row.enabled) entry.triggers.add(row.event_name);
        for (const name of row.wait_event_names) entry.waits.add(name);
      }
      for (const [id, entry] of fresh) this.names.set(id, entry);
    }
    return new Map(projectIds.flatMap((id) => (this.names.has(id) ? [[id, this.names.get(id)!] as const] : [])));
  }
}
