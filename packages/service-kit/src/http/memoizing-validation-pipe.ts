import { ValidationPipe, type ArgumentMetadata, type Type, type ValidationPipeOptions } from '@nestjs/common';

type DtoClass = Type<unknown>;

/** Inputs longer than this (as JSON) are validated every time: the memo is for the small, repeated ones. */
const MAX_KEY_LENGTH = 1024;
/** Entries over all DTO classes; the oldest goes first. At most about 2 MB of keys. */
const MAX_ENTRIES = 2000;

type Primitive = string | number | boolean | bigint | null | undefined;
/** A validated DTO's own values, when each is a primitive or an array of primitives. */
type Snapshot = [key: string, value: Primitive | Primitive[]][];

const isPrimitive = (value: unknown): value is Primitive => value === null || (typeof value !== 'object' && typeof value !== 'function');

/**
 * The app's ValidationPipe, remembering its recent successful results by DTO class and input.
 *
 * Every DTO rule and `@Transform` of these apps is a pure function of the input (no clock, no
 * randomness, no state), so the same query string or JSON body validated into the same DTO gives the
 * same instance every time; the pipe's class-transformer and class-validator work (a tenth of a small
 * JSON request's CPU, bench/README.md "Issue #34") is then done once per distinct input, not per request.
 * What is remembered is narrow on purpose:
 * - only plain inputs (a query or a JSON/form body) whose JSON is at most about 1 KB (estimated without
 *   serializing a large body), keyed by that JSON;
 * - only successes: a refused input fails through the whole pipeline every time;
 * - only DTOs whose validated values are primitives or arrays of primitives (no nested DTOs), so that
 *   each request gets its own instance (the arrays copied) and a handler that changes its DTO changes
 *   nothing for the next request; a DTO that once validated into anything else is not looked up again.
 * A DTO whose rules stop being pure (one that reads the clock, for instance) must not come through here.
 */
export class MemoizingValidationPipe extends ValidationPipe {
  private readonly memo = new Map<DtoClass, Map<string, Snapshot>>();
  private entries = 0;
  private readonly unmemoizable = new WeakSet<DtoClass>();

  constructor(options: ValidationPipeOptions) {
    super(options);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const metatype = metadata.metatype;
    if (!metatype || this.unmemoizable.has(metatype) || !isPlainInput(value) || !this.toValidate(metadata) || !isSmall(value)) {
      return super.transform(value, metadata);
    }
    const key = `${metadata.type}:${metadata.data ?? ''}:${JSON.stringify(value)}`;
    const known = this.memo.get(metatype)?.get(key);
    if (known) return instanceOf(metatype, known);
    const entity: unknown = await super.transform(value, metadata);
    const snapshot = snapshotOf(metatype, entity);
    if (snapshot) this.remember(metatype, key, snapshot);
    // A DTO that validated into nested values once (nested DTOs, objects) is not looked up again.
    else this.unmemoizable.add(metatype);
    return entity;
  }

  private remember(metatype: DtoClass, key: string, snapshot: Snapshot): void {
    if (this.entries >= MAX_ENTRIES) {
      // Oldest class's oldest entry: good enough for a bound; the hot inputs come back at once.
      const [oldestClass, byKey] = this.memo.entries().next().value as [DtoClass, Map<string, Snapshot>];
      byKey.delete(byKey.keys().next().value as string);
      if (byKey.size === 0) this.memo.delete(oldestClass);
      this.entries--;
    }
    let byKey = this.memo.get(metatype);
    if (!byKey) this.memo.set(metatype, (byKey = new Map<string, Snapshot>()));
    if (!byKey.has(key)) this.entries++;
    byKey.set(key, snapshot);
  }
}

/** A query object (null prototype in Express 5) or a parsed body: plain data, nothing else. */
function isPlainInput(value: unknown): value is object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * Whether the input's JSON can be at most about MAX_KEY_LENGTH characters, found without serializing
 * it: a large body (a send with attachments: up to 16 MB) costs a walk of its first kilobyte, not a
 * JSON.stringify of all of it.
 */
function isSmall(value: object): boolean {
  let budget = MAX_KEY_LENGTH;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') budget -= item.length + 2;
    else if (typeof item === 'object' && item !== null) {
      if (Array.isArray(item)) {
        budget -= item.length + 2;
        if (budget < 0) return false;
        for (const element of item) stack.push(element);
      } else {
        for (const key in item) {
          budget -= key.length + 4;
          if (budget < 0) return false;
          stack.push((item as Record<string, unknown>)[key]);
        }
      }
    } else budget -= 8;
    if (budget < 0) return false;
  }
  return true;
}

function snapshotOf(metatype: DtoClass, entity: unknown): Snapshot | null {
  if (typeof entity !== 'object' || entity === null || Object.getPrototypeOf(entity) !== metatype.prototype) return null;
  const snapshot: Snapshot = [];
  for (const key of Object.keys(entity)) {
    const value = (entity as Record<string, unknown>)[key];
    if (isPrimitive(value)) snapshot.push([key, value]);
    else if (Array.isArray(value) && value.every(isPrimitive)) snapshot.push([key, [...value]]);
    else return null;
  }
  return snapshot;
}

/** A new instance of the DTO with the remembered values (its own copy of each array). */
function instanceOf(metatype: DtoClass, snapshot: Snapshot): object {
  const entity = Object.create(metatype.prototype as object) as Record<string, unknown>;
  for (const [key, value] of snapshot) entity[key] = Array.isArray(value) ? [...value] : value;
  return entity;
}
