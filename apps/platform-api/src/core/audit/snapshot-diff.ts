import type { Snapshot } from './command.js';

/** Fields that change on every write and say nothing about what the command did. */
const VOLATILE_FIELDS = new Set(['updatedAt']);

function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** `{field: {from, to}}` for every top-level field whose value differs between the snapshots. */
export function diffSnapshots(before: Snapshot | null, after: Snapshot | null): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const key of keys) {
    if (VOLATILE_FIELDS.has(key)) continue;
    const from = before?.[key] ?? null;
    const to = after?.[key] ?? null;
    if (stable(from) !== stable(to)) changes[key] = { from, to };
  }
  return changes;
}

/** Same resource state, ignoring volatile fields: undo refuses to clobber a later change. */
export function sameSnapshot(a: Snapshot | null, b: Snapshot | null): boolean {
  return Object.keys(diffSnapshots(a, b)).length === 0;
}
