import { randomBytes } from 'node:crypto';
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
