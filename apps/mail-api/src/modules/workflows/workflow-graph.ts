import { isUUID } from 'class-validator';
import type { FieldError } from '@app/contracts';
import { contactDataProblem } from '../contacts/contact-data.js';
import { MAX_EVENT_NAME_LENGTH } from '../events/events.dto.js';
import { validateFilter } from '../segments/segment-condition.js';
import {
  DELAY_UNIT_SECONDS,
  DELAY_UNITS,
  LINK_FIELDS,
  MAX_STEP_ID_LENGTH,
  MAX_STEPS,
  MAX_WAIT_SECONDS,
  pauses,
  WORKFLOW_STEP_TYPES,
  type DelayUnit,
  type WorkflowStep,
  type WorkflowStepType,
} from './workflow-definition.js';
import { validateWebhookConfig } from './webhook-config.js';

/** A graph with hundreds of problems answers the first ones: enough to fix it, bounded in size. */
const MAX_ERRORS = 20;
const STEP_ID = /^[A-Za-z0-9_.-]+$/;
const ALL_LINKS = ['next', 'onTrue', 'onFalse', 'onTimeout'] as const;
const STEP_KEYS = new Set(['id', 'type', 'config', ...ALL_LINKS]);
const CONFIG_KEYS: Record<Exclude<WorkflowStepType, 'CONDITION'>, Set<string>> = {
  SEND_EMAIL: new Set(['templateId']),
  DELAY: new Set(['amount', 'unit']),
  WAIT_FOR_EVENT: new Set(['eventName', 'timeoutSeconds']),
  WEBHOOK: new Set(['url', 'method', 'headers', 'body']),
  UPDATE_CONTACT: new Set(['data', 'subscribed']),
  EXIT: new Set(),
};

export interface GraphOptions {
  /** Refuse webhook URLs naming a private or loopback address literally (production without MAIL_WEBHOOK_ALLOW_PRIVATE). */
  refusePrivateTargets: boolean;
}

type Errors = FieldError[];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(text: string): string {
  return text.length > 64 ? `${text.slice(0, 64)}...` : text;
}

/** Unknown properties are refused, not stripped: a misspelt `onTimout` would silently change the flow. */
function unknownKeys(input: Record<string, unknown>, allowed: Set<string>, path: string, errors: Errors): void {
  for (const key of Object.keys(input)) {
    if (!allowed.has(key))
      errors.push({ field: `${path}.${shown(key)}`, message: `property ${shown(key)} should not exist`, code: 'whitelistValidation' });
  }
}

function positiveInteger(value: unknown, max: number, field: string, errors: Errors): value is number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= max) return true;
  errors.push({ field, message: `${field.split('.').pop()} must be an integer from 1 to ${max}`, code: 'isInt' });
  return false;
}

function delayConfig(config: Record<string, unknown>, path: string, errors: Errors): void {
  const unitOk = DELAY_UNITS.includes(config.unit as DelayUnit);
  if (!unitOk) errors.push({ field: `${path}.unit`, message: `unit must be one of: ${DELAY_UNITS.join(', ')}`, code: 'isIn' });
  const perUnit = unitOk ? DELAY_UNIT_SECONDS[config.unit as DelayUnit] : 1;
  positiveInteger(config.amount, Math.floor(MAX_WAIT_SECONDS / perUnit), `${path}.amount`, errors);
}

function waitConfig(config: Record<string, unknown>, path: string, errors: Errors): void {
  const name = config.eventName;
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_EVENT_NAME_LENGTH || name.includes('\u0000')) {
    errors.push({
      field: `${path}.eventName`,
      message: `eventName must be a non-empty string of at most ${MAX_EVENT_NAME_LENGTH} characters`,
      code: 'isEventName',
    });
  }
  positiveInteger(config.timeoutSeconds, MAX_WAIT_SECONDS, `${path}.timeoutSeconds`, errors);
}

function updateContactConfig(config: Record<string, unknown>, path: string, errors: Errors): void {
  if (config.data === undefined && config.subscribed === undefined) {
    errors.push({ field: path, message: 'UPDATE_CONTACT needs data, subscribed or both', code: 'isNotEmpty' });
  }
  if (config.subscribed !== undefined && typeof config.subscribed !== 'boolean') {
    errors.push({ field: `${path}.subscribed`, message: 'subscribed must be a boolean', code: 'isBoolean' });
  }
  const problem = config.data === undefined ? null : contactDataProblem(config.data);
  if (problem) errors.push({ field: `${path}.data`, message: problem, code: 'isContactData' });
}

function configErrors(type: WorkflowStepType, config: unknown, path: string, options: GraphOptions): Errors {
  if (type === 'CONDITION') return validateFilter(config, path);
  if (!isPlainObject(config)) return [{ field: path, message: `config of a ${type} step must be an object`, code: 'isObject' }];
  const errors: Errors = [];
  unknownKeys(config, CONFIG_KEYS[type], path, errors);
  if (type === 'SEND_EMAIL' && !(typeof config.templateId === 'string' && isUUID(config.templateId))) {
    errors.push({ field: `${path}.templateId`, message: 'templateId must be the id of a template', code: 'isUuid' });
  }
  if (type === 'DELAY') delayConfig(config, path, errors);
  if (type === 'WAIT_FOR_EVENT') waitConfig(config, path, errors);
  if (type === 'WEBHOOK') errors.push(...validateWebhookConfig(config, path, options.refusePrivateTargets));
  if (type === 'UPDATE_CONTACT') updateContactConfig(config, path, errors);
  return errors;
}

/** One step's own problems (id, type, links' shape, config); the graph checks come after. */
function stepErrors(step: unknown, path: string, options: GraphOptions): Errors {
  if (!isPlainObject(step)) return [{ field: path, message: 'each step must be an object {id, type, config}', code: 'isObject' }];
  const errors: Errors = [];
  unknownKeys(step, STEP_KEYS, path, errors);
  const id = step.id;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_STEP_ID_LENGTH || !STEP_ID.test(id)) {
    errors.push({
      field: `${path}.id`,
      message: `id must be 1 to ${MAX_STEP_ID_LENGTH} letters, digits, "_", "-" or "."`,
      code: 'isStepId',
    });
  }
  const type = step.type as WorkflowStepType;
  if (!WORKFLOW_STEP_TYPES.includes(type)) {
    errors.push({ field: `${path}.type`, message: `type must be one of: ${WORKFLOW_STEP_TYPES.join(', ')}`, code: 'isIn' });
    return errors;
  }
  for (const link of ALL_LINKS) {
    const value = step[link];
    if (value === undefined || value === null) continue;
    if (!LINK_FIELDS[type].includes(link)) {
      const takes = LINK_FIELDS[type].length > 0 ? `takes ${LINK_FIELDS[type].join(' and ')}` : 'ends the execution';
      errors.push({ field: `${path}.${link}`, message: `a ${type} step ${takes}, not ${link}`, code: 'linkNotAllowed' });
    } else if (typeof value !== 'string') {
      errors.push({ field: `${path}.${link}`, message: `${link} must be a step id or null`, code: 'isStepId' });
    }
  }
  errors.push(...configErrors(type, step.config ?? (type === 'EXIT' ? {} : undefined), `${path}.config`, options));
  return errors;
}

/** The stored form: every link field of the type present (null when absent), config defaults applied. */
function normalize(step: Record<string, unknown>): WorkflowStep {
  const type = step.type as WorkflowStepType;
  const links = Object.fromEntries(LINK_FIELDS[type].map((link) => [link, (step[link] as string | null | undefined) ?? null]));
  let config = (step.config ?? {}) as Record<string, unknown>;
  if (type === 'WEBHOOK') config = { ...config, method: typeof config.method === 'string' ? config.method.toUpperCase() : 'POST' };
  if (type === 'WAIT_FOR_EVENT') config = { ...config, eventName: (config.eventName as string).trim() };
  return { id: step.id, type, config, ...links } as unknown as WorkflowStep;
}

/** Duplicate ids and links to ids that no step has. */
function referenceErrors(steps: WorkflowStep[]): Errors {
  const errors: Errors = [];
  const firstIndex = new Map<string, number>();
  steps.forEach((step, index) => {
    if (firstIndex.has(step.id)) {
      errors.push({
        field: `steps[${index}].id`,
        message: `step id ${step.id} is already used by steps[${firstIndex.get(step.id)}]`,
        code: 'duplicateStepId',
      });
    } else firstIndex.set(step.id, index);
  });
  steps.forEach((step, index) => {
    const record = step as unknown as Record<string, string | null>;
    for (const link of LINK_FIELDS[step.type]) {
      const target = record[link];
      if (target !== null && !firstIndex.has(target)) {
        errors.push({
          field: `steps[${index}].${link}`,
          message: `${link} names step ${shown(target)}, which this workflow does not have`,
          code: 'unknownStepId',
        });
      }
    }
  });
  return errors;
}

/**
 * Cycles that pass through no DELAY or WAIT_FOR_EVENT step: exactly the cycles of the graph restricted
 * to the other steps. A depth-first search over that subgraph reports each back edge, at the link that
 * closes the cycle. At most 100 steps: the recursion is shallow.
 */
function instantCycleErrors(steps: WorkflowStep[]): Errors {
  const errors: Errors = [];
  const index = new Map(steps.map((step, i) => [step.id, i]));
  const state = new Map<string, 'open' | 'done'>();
  const trail: string[] = [];
  const visit = (i: number): void => {
    const step = steps[i];
    state.set(step.id, 'open');
    trail.push(step.id);
    const record = step as unknown as Record<string, string | null>;
    for (const link of LINK_FIELDS[step.type]) {
      const target = record[link];
      const j = target === null ? undefined : index.get(target);
      if (j === undefined || pauses(steps[j].type)) continue;
      if (state.get(steps[j].id) === 'open') {
        const cycle = [...trail.slice(trail.indexOf(steps[j].id)), steps[j].id].join(' -> ');
        errors.push({
          field: `steps[${i}].${link}`,
          message: `steps ${cycle} form a cycle with no DELAY or WAIT_FOR_EVENT step in it`,
          code: 'cycleWithoutPause',
        });
      } else if (!state.has(steps[j].id)) visit(j);
    }
    trail.pop();
    state.set(step.id, 'done');
  };
  steps.forEach((step, i) => {
    if (!pauses(step.type) && !state.has(step.id)) visit(i);
  });
  return errors;
}

/**
 * Validates and normalizes a workflow's `steps`: each step's shape and config (field errors such as
 * `steps[2].config.amount`), then the graph: duplicate ids, links to unknown ids, cycles without a
 * pause. Answers the normalized steps, or the errors (at most 20) when there is any.
 */
export function validateWorkflowSteps(input: unknown, options: GraphOptions): { steps: WorkflowStep[] } | { errors: FieldError[] } {
  if (!Array.isArray(input)) return { errors: [{ field: 'steps', message: 'steps must be an array of steps', code: 'isArray' }] };
  if (input.length === 0) return { errors: [{ field: 'steps', message: 'steps must contain at least 1 step', code: 'arrayMinSize' }] };
  if (input.length > MAX_STEPS) {
    return { errors: [{ field: 'steps', message: `steps must contain at most ${MAX_STEPS} steps`, code: 'arrayMaxSize' }] };
  }
  const errors: Errors = [];
  for (let i = 0; i < input.length && errors.length < MAX_ERRORS; i += 1) errors.push(...stepErrors(input[i], `steps[${i}]`, options));
  if (errors.length > 0) return { errors: errors.slice(0, MAX_ERRORS) };
  const steps = (input as Record<string, unknown>[]).map(normalize);
  const graph = referenceErrors(steps);
  if (graph.length === 0) graph.push(...instantCycleErrors(steps));
  return graph.length > 0 ? { errors: graph.slice(0, MAX_ERRORS) } : { steps };
}
