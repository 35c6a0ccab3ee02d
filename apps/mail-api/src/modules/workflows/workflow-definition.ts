import type { SegmentFilter } from '../segments/segment-condition.js';

/**
 * What a workflow is made of (decisions.md "Workflow bodies"), as stored in `workflows.steps` after
 * validation (workflow-graph.ts) and as the API answers it. Framework-free: the HTTP side, the track
 * hook and the step runner all read it.
 */
export const WORKFLOW_STEP_TYPES = ['SEND_EMAIL', 'DELAY', 'WAIT_FOR_EVENT', 'CONDITION', 'WEBHOOK', 'UPDATE_CONTACT', 'EXIT'] as const;
export type WorkflowStepType = (typeof WORKFLOW_STEP_TYPES)[number];

export const EXECUTION_STATUSES = ['RUNNING', 'WAITING', 'COMPLETED', 'EXITED', 'FAILED', 'CANCELLED'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/**
 * A step visit's state: PENDING (due, its job queued), RUNNING (claimed; a WEBHOOK attempt in flight),
 * WAITING (a DELAY or WAIT_FOR_EVENT until `due_at` or the event), then COMPLETED, SKIPPED (a
 * marketing email to an unsubscribed contact), FAILED or CANCELLED.
 */
export const STEP_STATUSES = ['PENDING', 'RUNNING', 'WAITING', 'COMPLETED', 'SKIPPED', 'FAILED', 'CANCELLED'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const DELAY_UNITS = ['seconds', 'minutes', 'hours', 'days'] as const;
export type DelayUnit = (typeof DELAY_UNITS)[number];
export const DELAY_UNIT_SECONDS: Record<DelayUnit, number> = { seconds: 1, minutes: 60, hours: 3600, days: 86_400 };

export const WEBHOOK_METHODS = ['POST', 'PUT', 'PATCH'] as const;
export type WebhookMethod = (typeof WEBHOOK_METHODS)[number];

/** Bounds of one workflow: the graph is checked on every save, and the runner walks it per step. */
export const MAX_STEPS = 100;
export const MAX_STEP_ID_LENGTH = 64;
/** The longest DELAY or WAIT_FOR_EVENT timeout: one year. */
export const MAX_WAIT_SECONDS = 366 * 86_400;
export const MAX_WEBHOOK_URL_LENGTH = 2048;
export const MAX_WEBHOOK_HEADERS = 20;
export const MAX_WEBHOOK_HEADER_VALUE = 1000;
/** A configured webhook body, as JSON. */
export const MAX_WEBHOOK_BODY_BYTES = 64 * 1024;
/** Step visits of one execution (a loop through a DELAY still ends): past it the execution is FAILED. */
export const MAX_STEP_VISITS = 1000;
/** WEBHOOK attempts (the first and 4 retries, backoff doubling from MAIL_WEBHOOK_RETRY_BASE_MS). */
export const WEBHOOK_ATTEMPTS = 5;

export interface SendEmailConfig {
  templateId: string;
}
export interface DelayConfig {
  amount: number;
  unit: DelayUnit;
}
export interface WaitForEventConfig {
  eventName: string;
  timeoutSeconds: number;
}
export type ConditionConfig = SegmentFilter;
export interface WebhookConfig {
  url: string;
  method: WebhookMethod;
  headers?: Record<string, string>;
  body?: unknown;
}
export interface UpdateContactConfig {
  data?: Record<string, unknown>;
  subscribed?: boolean;
}

interface StepBase<T extends WorkflowStepType, C> {
  id: string;
  type: T;
  config: C;
}

/** `next`: the step after it (null or absent: the execution ends COMPLETED). */
interface Linear {
  next: string | null;
}

export type SendEmailStep = StepBase<'SEND_EMAIL', SendEmailConfig> & Linear;
export type DelayStep = StepBase<'DELAY', DelayConfig> & Linear;
/** `next` when the contact tracks the event in time, `onTimeout` otherwise. */
export type WaitForEventStep = StepBase<'WAIT_FOR_EVENT', WaitForEventConfig> & Linear & { onTimeout: string | null };
export type ConditionStep = StepBase<'CONDITION', ConditionConfig> & { onTrue: string | null; onFalse: string | null };
export type WebhookStep = StepBase<'WEBHOOK', WebhookConfig> & Linear;
export type UpdateContactStep = StepBase<'UPDATE_CONTACT', UpdateContactConfig> & Linear;
export type ExitStep = StepBase<'EXIT', Record<string, never>>;

export type WorkflowStep = SendEmailStep | DelayStep | WaitForEventStep | ConditionStep | WebhookStep | UpdateContactStep | ExitStep;

/** The step-id fields (beside `config`) each type takes. */
export const LINK_FIELDS: Record<WorkflowStepType, readonly ('next' | 'onTrue' | 'onFalse' | 'onTimeout')[]> = {
  SEND_EMAIL: ['next'],
  DELAY: ['next'],
  WAIT_FOR_EVENT: ['next', 'onTimeout'],
  CONDITION: ['onTrue', 'onFalse'],
  WEBHOOK: ['next'],
  UPDATE_CONTACT: ['next'],
  EXIT: [],
};

/** Steps that pause an execution: every cycle of a workflow must pass through one. */
export function pauses(type: WorkflowStepType): boolean {
  return type === 'DELAY' || type === 'WAIT_FOR_EVENT';
}

/** The step ids a step leads to (null links left out). */
export function linksOf(step: WorkflowStep): string[] {
  const record = step as unknown as Record<string, string | null | undefined>;
  return LINK_FIELDS[step.type].map((field) => record[field]).filter((id): id is string => typeof id === 'string');
}

/** The event names the WAIT_FOR_EVENT steps of a workflow wait for (the track hook's filter). */
export function waitEventNames(steps: WorkflowStep[]): string[] {
  return [...new Set(steps.filter((s): s is WaitForEventStep => s.type === 'WAIT_FOR_EVENT').map((s) => s.config.eventName))];
}
