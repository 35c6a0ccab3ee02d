import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { dropDatabase, ensureDatabaseExists } from '../database/provision.js';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh, uniquely named database on the server of `baseUrl` (default: the local Postgres), so test
 * files run in parallel and never see each other's rows. Drop it in `afterAll`.
 */
export async function createTestDatabase(
  prefix: string,
  baseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
): Promise<TestDatabase> {
  const u = new URL(baseUrl);
  u.pathname = `/${prefix}_t_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const url = u.toString();
  await ensureDatabaseExists(url);
  return { url, drop: () => dropDatabase(url) };
}

/** A unique BullMQ prefix per test file, so parallel files never consume each other's jobs. */
export function uniqueQueuePrefix(name: string): string {
  return `test:${name}:${randomBytes(4).toString('hex')}`;
}

/**
 * Deletes every Redis key under a test file's queue prefix (its queues, rate gates, leases, caches):
 * many have no expiry, and a test run leaves thousands behind otherwise. Call it once nothing of the
 * file writes there any more. Returns how many keys it deleted.
 */
export async function deleteQueueKeys(prefix: string, redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'): Promise<number> {
  if (!prefix.startsWith('test:')) throw new Error(`not a test queue prefix: ${prefix}`);
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  let deleted = 0;
  try {
    await redis.connect();
    for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 1000 }) as AsyncIterable<string[]>) {
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}
