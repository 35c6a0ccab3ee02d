// Postgres for the dev tools and the benches: one SQL client helper, dropping a database, Redis keys
// of a private prefix. Specs have their own in @app/service-kit/testing (test-database.ts).
import pg from 'pg';
import { Redis } from 'ioredis';
import { withDatabase } from './apps.mjs';

/** Runs `fn` with a connected pg client on `url`, and closes the client whatever happens. */
export async function withSqlClient(url, fn) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** One statement on `url`, on a client of its own; resolves with its rows. */
export async function sqlQuery(url, text, params = []) {
  return withSqlClient(url, async (client) => (await client.query(text, params)).rows);
}

/**
 * Drops the database `url` names, closing its sessions first (`WITH (FORCE)`); nothing when it does
 * not exist. The apps' `migrate` command creates it again.
 */
export async function dropDatabase(url) {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  await withSqlClient(withDatabase(url, 'postgres'), (c) => c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`));
}

/** Deletes every Redis key under `prefix:` (a bench's private queue prefix), SCAN by SCAN. */
export async function deleteRedisKeys(url, prefix) {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
