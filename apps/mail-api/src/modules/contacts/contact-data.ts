import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';
import type { ContactDataPrimitive } from '@app/contracts';

export const MAX_DATA_KEYS = 100;
export const MAX_DATA_KEY_LENGTH = 128;
export const MAX_DATA_STRING_LENGTH = 10_000;

/**
 * What a `data` object asks for (decisions.md "Mail"): each value is a primitive or
 * `{value, persistent}`. Persistent values (the default) are set on the contact, `null` deletes the
 * key, and `persistent: false` values belong to the one event being tracked.
 */
export interface ContactDataPatch {
  /** Keys to set on the contact. */
  set: Record<string, ContactDataPrimitive>;
  /** Keys to delete from the contact. */
  unset: string[];
  /** Every value, unwrapped: what the tracked event records. */
  event: Record<string, ContactDataPrimitive>;
}

const EMPTY_PATCH: ContactDataPatch = Object.freeze({ set: {}, unset: [], event: {} });

/** jsonb refuses U+0000 and unpaired UTF-16 surrogates (JSON.stringify writes both as escapes it cannot store). */
// eslint-disable-next-line no-control-regex -- matching U+0000 is the point: jsonb cannot store it
const NOT_STORABLE_IN_JSONB = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function primitiveProblem(value: unknown): string | null {
  if (value === null || typeof value === 'boolean') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'must be a finite number';
  if (typeof value === 'string') {
    if (NOT_STORABLE_IN_JSONB.test(value)) return 'must not contain NUL characters or unpaired surrogates';
    return value.length <= MAX_DATA_STRING_LENGTH ? null : `must be at most ${MAX_DATA_STRING_LENGTH} characters`;
  }
  return 'must be a string, number, boolean, null or {value, persistent}';
}

/** `{value, persistent?}` and nothing else: any other object is not a wrapper (and not allowed). */
function isWrapper(value: Record<string, unknown>): boolean {
  return 'value' in value && Object.keys(value).every((key) => key === 'value' || key === 'persistent');
}

/** The first problem of a `data` object, as a message naming the key; null when it is acceptable. */
export function contactDataProblem(data: unknown): string | null {
  if (!isPlainObject(data)) return 'data must be an object';
  const entries = Object.entries(data);
  if (entries.length > MAX_DATA_KEYS) return `data must have at most ${MAX_DATA_KEYS} keys`;
  for (const [key, value] of entries) {
    if (key.length === 0 || key.length > MAX_DATA_KEY_LENGTH) {
      return `data keys must be 1 to ${MAX_DATA_KEY_LENGTH} characters long`;
    }
    if (NOT_STORABLE_IN_JSONB.test(key)) return 'data keys must not contain NUL characters or unpaired surrogates';
    if (isPlainObject(value)) {
      if (!isWrapper(value)) return `data.${key} must be a string, number, boolean, null or {value, persistent}`;
      if (value.persistent !== undefined && typeof value.persistent !== 'boolean') {
        return `data.${key}.persistent must be a boolean`;
      }
      const problem = primitiveProblem(value.value);
      if (problem) return `data.${key}.value ${problem}`;
      continue;
    }
    const problem = primitiveProblem(value);
    if (problem) return `data.${key} ${problem}`;
  }
  return null;
}

/** Splits a validated `data` object into what changes on the contact and what the event records. */
export function parseContactData(data: Record<string, unknown> | undefined): ContactDataPatch {
  if (!data) return EMPTY_PATCH;
  const patch: ContactDataPatch = { set: {}, unset: [], event: {} };
  for (const [key, raw] of Object.entries(data)) {
    const wrapped = isPlainObject(raw);
    const value = (wrapped ? raw.value : raw) as ContactDataPrimitive;
    patch.event[key] = value;
    if (wrapped && raw.persistent === false) continue;
    if (value === null) patch.unset.push(key);
    else patch.set[key] = value;
  }
  return patch;
}

export function hasContactChanges(patch: ContactDataPatch): boolean {
  return patch.unset.length > 0 || Object.keys(patch.set).length > 0;
}

/** class-validator rule for `data` fields: 422 with the first offending key in the message. */
export function IsContactData(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isContactData',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => contactDataProblem(value) === null,
        defaultMessage: (args?: ValidationArguments) => contactDataProblem(args?.value) ?? 'data is invalid',
      },
    });
}
