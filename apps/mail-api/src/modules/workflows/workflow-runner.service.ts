import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { projectScope, type ProjectScope } from '../../core/scope/project-scope.js';
import { ContactsRepository } from '../contacts/contacts.repository.js';
import { parseContactData } from '../contacts/contact-data.js';
import {
  DELAY_UNIT_SECONDS,
  type ConditionStep,
  type DelayStep,
  type SendEmailStep,
  type UpdateContactStep,
  type WaitForEventStep,
  type WorkflowStep,
} from './workflow-definition.js';
import { WorkflowEmailStep } from './workflow-email-step.js';
import { WorkflowExecutionsRepository } from './workflow-executions.repository.js';
import { WorkflowStepsRepository, type StepContextRow } from './workflow-steps.repository.js';
import { WorkflowTransitions, type Transition } from './workflow-transitions.js';
import { WorkflowWebhookStep, type StepRunResult } from './workflow-webhook-step.js';
import type { MailWorkflowStepPayload, StepJob } from './workflows.queue.js';

/** The row is not visible (yet): a step written in a transaction that has not committed. BullMQ retries. */
export class StepRowNotFound extends Error {}

const done = (outcome: string, jobs: StepJob[] = []): StepRunResult => ({ outcome, jobs });

/** The outcome of a job for a WAITING row before its time: only its timer job (`_due`) waits for it. */
export const WAITING_UNTIL_DUE = 'waiting until due';

/**
 * Runs one step visit, at most once. The row's status in Postgres is the gate, the job only a nudge:
 *
 * - PENDING: claimed by an UPDATE (status = 'PENDING') in the same transaction as the step's effect and
 *   the move to the next step (SEND_EMAIL's email row, UPDATE_CONTACT's change, a CONDITION's branch,
 *   EXIT). A worker that dies mid-transaction commits nothing; the job runs again and finds the row as
 *   it was. A duplicate job finds it claimed and does nothing. WEBHOOK is the exception (an outside
 *   effect): WorkflowWebhookStep.
 * - DELAY / WAIT_FOR_EVENT: PENDING -> WAITING with `due_at` (and the awaited event name), plus a delayed
 *   job for `due_at`. The track hook resumes a WAIT by setting `resumed_event_id` and queueing a job.
 * - WAITING: once resumed or due, WAITING -> COMPLETED and on to `next` (resumed, or a matching event
 *   found at timeout) or `onTimeout`.
 */
@Injectable()
export class WorkflowRunner {
  constructor(
    private readonly dataSource: DataSource,
    private readonly steps: WorkflowStepsRepository,
    private readonly executions: WorkflowExecutionsRepository,
    private readonly transitions: WorkflowTransitions,
    private readonly contacts: ContactsRepository,
    private readonly emailStep: WorkflowEmailStep,
    private readonly webhookStep: WorkflowWebhookStep,
  ) {}

  async run(payload: MailWorkflowStepPayload): Promise<StepRunResult> {
    const scope = projectScope(payload.projectId);
    const ctx = await this.steps.context(this.dataSource, scope, payload.stepRowId);
    if (!ctx) throw new StepRowNotFound(`step row ${payload.stepRowId} not found`);
    if (ctx.execution_status !== 'RUNNING' && ctx.execution_status !== 'WAITING') return done(`execution ${ctx.execution_status}`);
    const step = ctx.workflow_steps.find((s) => s.id === ctx.step_id && s.type === ctx.type);
    if (ctx.status === 'WAITING') return this.endWait(scope, ctx, step);
    if (ctx.status === 'RUNNING' && ctx.type === 'WEBHOOK' && step?.type === 'WEBHOOK') return this.webhookStep.attempt(scope, ctx, step);
    if (ctx.status !== 'PENDING') return done(`step ${ctx.status}`);
    if (!ctx.is_due) return { outcome: 'not due yet', jobs: [], notBefore: ctx.due_at };
    if (!step) return this.failStep(scope, ctx, `step ${ctx.step_id} is no longer in the workflow (as a ${ctx.type} step)`);
    return this.runPending(scope, ctx, step);
  }

  /** A step whose job kept failing (BullMQ's last attempt): it fails, and its execution with it. */
  failStep(scope: ProjectScope, ctx: StepContextRow, error: string): Promise<StepRunResult> {
    return this.dataSource.transaction(async (tx) => {
      await this.transitions.fail(tx, scope, ctx, error);
      return done(`failed: ${error}`);
    });
  }

  /** failStep by payload, for the job's last attempt (the row may be gone: then there is nothing to fail). */
  async failByPayload(payload: MailWorkflowStepPayload, error: string): Promise<void> {
    const scope = projectScope(payload.projectId);
    const ctx = await this.steps.context(this.dataSource, scope, payload.stepRowId);
    if (ctx && (ctx.execution_status === 'RUNNING' || ctx.execution_status === 'WAITING')) await this.failStep(scope, ctx, error);
  }

  private runPending(scope: ProjectScope, ctx: StepContextRow, step: WorkflowStep): Promise<StepRunResult> {
    switch (step.type) {
      case 'DELAY':
        return this.startWait(scope, ctx, step);
      case 'WAIT_FOR_EVENT':
        return this.startWait(scope, ctx, step);
      case 'WEBHOOK':
        return this.webhookStep.attempt(scope, ctx, step);
      case 'SEND_EMAIL':
        return this.sendEmail(scope, ctx, step);
      case 'CONDITION':
        return this.instant(scope, ctx, (tx) => this.condition(tx, scope, ctx, step));
      case 'UPDATE_CONTACT':
        return this.instant(scope, ctx, (tx) => this.updateContact(tx, scope, ctx, step));
      case 'EXIT':
        return this.instant(scope, ctx, () => Promise.resolve({ transition: { kind: 'exit' } as const, outcome: undefined }));
    }
  }

  /** Claim, effect, completion and the next step in one transaction. */
  private instant(
    scope: ProjectScope,
    ctx: StepContextRow,
    effect: (tx: EntityManager) => Promise<{ transition: Transition; outcome: unknown }>,
  ): Promise<StepRunResult> {
    return this.dataSource.transaction(async (tx) => {
      if (!(await this.steps.claim(tx, scope, ctx.id))) return done('claimed by another run');
      const { transition, outcome } = await effect(tx);
      await this.steps.finish(tx, scope, { id: ctx.id, status: 'COMPLETED', outcome });
      const next = await this.transitions.apply(tx, scope, ctx, transition);
      return done(`${ctx.type} done`, next ? [{ ...next, phase: 'a0' }] : []);
    });
  }

  private async condition(tx: EntityManager, scope: ProjectScope, ctx: StepContextRow, step: ConditionStep) {
    const holds = await this.steps.conditionHolds(tx, scope, { contactId: ctx.contact_id, filter: step.config });
    return { transition: { kind: 'next', stepId: holds ? step.onTrue : step.onFalse } as const, outcome: { result: holds } };
  }

  private async updateContact(tx: EntityManager, scope: ProjectScope, ctx: StepContextRow, step: UpdateContactStep) {
    const patch = parseContactData(step.config.data);
    await this.contacts.update(tx, scope, { id: ctx.contact_id, subscribed: step.config.subscribed, patch });
    return { transition: { kind: 'next', stepId: step.next } as const, outcome: undefined };
  }

  private sendEmail(scope: ProjectScope, ctx: StepContextRow, step: SendEmailStep): Promise<StepRunResult> {
    return this.dataSource.transaction(async (tx) => {
      if (!(await this.steps.claim(tx, scope, ctx.id))) return done('claimed by another run');
      const sent = await this.emailStep.write(tx, scope, ctx, step);
      if (sent.status === 'FAILED') {
        await this.steps.finish(tx, scope, { id: ctx.id, status: 'FAILED', error: sent.error });
        await this.transitions.apply(tx, scope, ctx, { kind: 'fail', error: sent.error });
        return done(`failed: ${sent.error}`);
      }
      const outcome = sent.status === 'COMPLETED' ? { emailId: sent.emailId } : { skipped: sent.reason };
      await this.steps.finish(tx, scope, {
        id: ctx.id,
        status: sent.status,
        outcome,
        error: sent.status === 'SKIPPED' ? sent.reason : null,
      });
      const next = await this.transitions.apply(tx, scope, ctx, { kind: 'next', stepId: step.next });
      const result = done(`email ${sent.status === 'COMPLETED' ? sent.emailId : 'skipped'}`, next ? [{ ...next, phase: 'a0' }] : []);
      return sent.status === 'COMPLETED' ? { ...result, emailId: sent.emailId } : result;
    });
  }

  /** DELAY and WAIT_FOR_EVENT: WAITING until `due_at` (or the event), with a delayed job for `due_at`. */
  private async startWait(scope: ProjectScope, ctx: StepContextRow, step: DelayStep | WaitForEventStep): Promise<StepRunResult> {
    const isWait = step.type === 'WAIT_FOR_EVENT';
    const seconds = isWait ? step.config.timeoutSeconds : step.config.amount * DELAY_UNIT_SECONDS[step.config.unit];
    const waiting = await this.dataSource.transaction(async (tx) => {
      const row = await this.steps.startWait(tx, scope, { id: ctx.id, seconds, waitEventName: isWait ? step.config.eventName : null });
      if (row) await this.executions.setActiveStatus(tx, scope, { id: ctx.execution_id, status: 'WAITING' });
      return row;
    });
    if (!waiting) return done('claimed by another run');
    const base = { stepRowId: ctx.id, executionId: ctx.execution_id, projectId: scope.projectId };
    const jobs: StepJob[] = [{ ...base, phase: 'due', delayMs: seconds * 1000 }];
    if (isWait) {
      // An event committed while the wait was being written was not seen by the track hook: look once now.
      const eventId = await this.steps.eventSince(this.dataSource, scope, {
        contactId: ctx.contact_id,
        name: step.config.eventName,
        since: waiting.started_at,
        until: waiting.due_at,
      });
      if (eventId && (await this.steps.markResumed(this.dataSource, scope, { id: ctx.id, eventId }))) jobs.push({ ...base, phase: 'ev' });
    }
    return done(`waiting ${seconds} s`, jobs);
  }

  private async endWait(scope: ProjectScope, ctx: StepContextRow, step: WorkflowStep | undefined): Promise<StepRunResult> {
    if (!ctx.resumed_event_id && !ctx.is_due) return { outcome: WAITING_UNTIL_DUE, jobs: [], notBefore: ctx.due_at };
    if (!step || (step.type !== 'DELAY' && step.type !== 'WAIT_FOR_EVENT')) {
      return this.failStep(scope, ctx, `step ${ctx.step_id} is no longer in the workflow (as a ${ctx.type} step)`);
    }
    return this.dataSource.transaction(async (tx) => {
      const ended = await this.steps.endWait(tx, scope, ctx.id);
      if (!ended) return done('ended by another run');
      let stepId = step.next;
      if (step.type === 'WAIT_FOR_EVENT' && !ended.resumed_event_id) {
        // Timed out, unless an event arrived that the hook did not see (it committed during the wait's start).
        const late = await this.steps.eventSince(tx, scope, {
          contactId: ctx.contact_id,
          name: step.config.eventName,
          since: ctx.started_at!,
          until: ctx.due_at,
        });
        if (!late) stepId = step.onTimeout;
      }
      const next = await this.transitions.apply(tx, scope, ctx, { kind: 'next', stepId });
      return done(stepId === step.next ? 'wait ended' : 'wait timed out', next ? [{ ...next, phase: 'a0' }] : []);
    });
  }
}
