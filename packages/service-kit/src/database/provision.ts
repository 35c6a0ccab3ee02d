import pg from 'pg';

/** The database name of a Postgres URL. */
export function databaseNameOf(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!name) throw new Error(`database URL has no database name: ${redactUrl(url)}`);
  return name;
}

/** The same server, database `postgres`: where CREATE/DROP DATABASE are issued. */
function maintenanceUrl(url: string): string {
  const u = new URL(url);
  u.pathname = '/postgres';
  return u.toString();
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<invalid url>';
  }
}

/** Creates the database of `url` when it does not exist yet (decisions.md: "a missing database is created at start"). */
export async function ensureDatabaseExists(url: string): Promise<boolean> {
  const name = databaseNameOf(url);
  const client = new pg.Client({ connectionString: maintenanceUrl(url) });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${quoteIdent(name)}`);
      return true;
    } catch (err) {
      // 42P04 duplicate_database / 23505: another process created it concurrently.
      const code = (err as { code?: string }).code;
      if (code === '42P04' || code === '23505') return false;
      throw err;
    }
  } finally {
    await client.end();
  }
}

export async function dropDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: maintenanceUrl(url) });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(databaseNameOf(url))} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
