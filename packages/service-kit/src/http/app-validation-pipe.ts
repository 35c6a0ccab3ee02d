import { ValidationPipe, type ArgumentMetadata } from '@nestjs/common';

/** Longest array and deepest nesting `isPlainData` looks at; anything larger gets Nest's own walks. */
const MAX_PLAIN_ITEMS = 1000;
const MAX_PLAIN_DEPTH = 64;

/**
 * Nest's ValidationPipe with two shortcuts that change no outcome, only what a request pays for it
 * (issue #34: the pipe was the largest cost of `POST /auth/feature-check` that plain Express does not
 * pay, bench/README.md):
 * - a custom parameter (`@CurrentAuth()`, `@CurrentProject()`) is returned at once. With
 *   `validateCustomDecorators` off Nest's pipe returns it untouched, but from an async function: a
 *   promise and its microtask turns per parameter per request. Nest awaits whatever a pipe returns.
 * - before validating, Nest closes the gaps of sparse arrays and strips `__proto__`, `prototype` and
 *   `constructor` keys: two walks of the value, each with a WeakSet and an `instanceof` test per
 *   object. On plain data that has neither (every JSON body and query string without those keys:
 *   `isPlainData`), both walks are no-ops; such a value passes one cheaper check instead, and any
 *   other value still gets Nest's walks.
 */
export class AppValidationPipe extends ValidationPipe {
  /**
   * The value `closeArrayGaps` found plain, for `stripProtoKeys`, which Nest calls right after it on
   * the same value with nothing in between that could change it (one check per request, not two).
   */
  private checkedPlain: unknown = NOT_CHECKED;

  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // What Nest's transform() returns for it (toValidate() is false, transformPrimitive() passes a
    // custom parameter through), without the async function around it.
    if (metadata.type === 'custom' && !this.validateCustomDecorators) return value as Promise<unknown>;
    this.checkedPlain = NOT_CHECKED;
    return super.transform(value, metadata);
  }

  protected override closeArrayGaps(value: unknown): void {
    const plain = isPlainData(value);
    this.checkedPlain = plain ? value : NOT_CHECKED;
    if (!plain) super.closeArrayGaps(value);
  }

  protected override stripProtoKeys(value: unknown): void {
    const checked = value === this.checkedPlain;
    this.checkedPlain = NOT_CHECKED;
    if (!checked && !isPlainData(value)) super.stripProtoKeys(value);
  }
}

const NOT_CHECKED = Symbol('not checked');

/**
 * Whether `value` is data Nest's `closeArrayGaps` and `stripProtoKeys` would leave as it is: a
 * primitive, or objects (prototype `Object.prototype` or null) without an own `__proto__`, `prototype`
 * or `constructor` key, and arrays (plain, at most MAX_PLAIN_ITEMS long) without gaps or keys other
 * than their indexes, nested at most MAX_PLAIN_DEPTH deep (a cycle ends there too). Conservative:
 * false only costs Nest's walks.
 */
export function isPlainData(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (depth >= MAX_PLAIN_DEPTH) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (prototype !== Array.prototype || value.length > MAX_PLAIN_ITEMS) return false;
    for (let i = 0; i < value.length; i++) {
      if (!Object.hasOwn(value, i) || !isPlainData(value[i], depth + 1)) return false;
    }
    // No gap (above), so any key beyond the indexes is another property, which Nest would walk.
    return Object.keys(value).length === value.length;
  }
  if (prototype !== Object.prototype && prototype !== null) return false;
  if (Object.hasOwn(value, '__proto__') || Object.hasOwn(value, 'prototype') || Object.hasOwn(value, 'constructor')) return false;
  // for-in, as stripProtoKeys walks (inherited enumerable keys included).
  for (const key in value) {
    if (!isPlainData((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}
