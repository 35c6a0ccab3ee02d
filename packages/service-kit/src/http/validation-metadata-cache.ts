import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata.js';

/** A DTO class, as class-validator keys its rules. */
type Target = abstract new (...args: never[]) => unknown;

type MetadataLookup = (
  targetConstructor: Target,
  targetSchema: string,
  always: boolean,
  strictGroups: boolean,
  groups?: string[],
) => ValidationMetadata[];

let installed = false;

/**
 * Memoizes class-validator's `getTargetValidationMetadatas`, which every `validate()` calls once per
 * (nested) DTO: to find inherited rules it walks every class that has any rule in the whole app with
 * an `instanceof` each, so its cost grows with the number of DTOs, not with the one being validated.
 * With this app's DTOs it was the largest single cost of a small JSON request (7% of
 * `POST /auth/feature-check`'s CPU: bench/README.md). Its result depends only on the arguments and on
 * the registered rules, which the decorators add when their modules load; the cache is dropped
 * whenever a rule is added anyway. The arrays returned are only read by class-validator.
 */
export function memoizeValidationMetadata(): void {
  if (installed) return;
  installed = true;
  const storage = getMetadataStorage() as unknown as {
    getTargetValidationMetadatas: MetadataLookup;
    addValidationMetadata(metadata: ValidationMetadata): void;
  };
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  const add = storage.addValidationMetadata.bind(storage);
  const cache = new Map<Target, CachedLookups>();
  storage.addValidationMetadata = (metadata) => {
    cache.clear();
    add(metadata);
  };
  storage.getTargetValidationMetadatas = (targetConstructor, targetSchema, always, strictGroups, groups) => {
    let lookups = cache.get(targetConstructor);
    if (!lookups) cache.set(targetConstructor, (lookups = { withoutGroups: [], other: new Map<string, ValidationMetadata[]>() }));
    // The usual call (no schema, no groups: every validation of the apps) is found by two booleans,
    // without building a key per call.
    if (targetSchema === undefined && groups === undefined) {
      const slot = (always ? 2 : 0) + (strictGroups ? 1 : 0);
      return (lookups.withoutGroups[slot] ??= lookup(targetConstructor, targetSchema, always, strictGroups, groups));
    }
    const key = `${targetSchema}|${always}|${strictGroups}|${groups?.join('\u0000') ?? ''}`;
    let metadatas = lookups.other.get(key);
    if (!metadatas) lookups.other.set(key, (metadatas = lookup(targetConstructor, targetSchema, always, strictGroups, groups)));
    return metadatas;
  };
}

/** The lookups of one class: without schema and groups by `always` and `strictGroups`, else by a key of all four. */
interface CachedLookups {
  withoutGroups: (ValidationMetadata[] | undefined)[];
  other: Map<string, ValidationMetadata[]>;
}
