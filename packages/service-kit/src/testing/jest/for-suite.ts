import { afterAll, beforeAll } from '@jest/globals';

/**
 * A resource for the calling describe block: `start` runs before its tests, `close` after them. The
 * answer reads it; reading before beforeAll finished throws, naming `what` (a getter read at describe
 * time, outside a test, is a spec bug that would otherwise surface as `undefined`).
 */
export function forSuite<T>(
  what: string,
  start: () => Promise<T>,
  close: (resource: T) => Promise<void>,
  startTimeoutMs?: number,
): () => T {
  let resource: { value: T } | undefined;
  beforeAll(async () => {
    resource = { value: await start() };
  }, startTimeoutMs);
  afterAll(async () => {
    if (resource) await close(resource.value);
  });
  return () => {
    if (!resource) throw new Error(`${what}: read inside a test, after beforeAll started it`);
    return resource.value;
  };
}
