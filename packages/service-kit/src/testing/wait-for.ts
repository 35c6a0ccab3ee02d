/**
 * Polls `probe` every 50 ms until it answers something other than null or undefined, and returns
 * that; throws after `timeoutMs`, naming `what` it waited for.
 */
export async function waitFor<T>(
  probe: () => T | null | undefined | Promise<T | null | undefined>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What `waitForLockWaiter` needs of a database handle (a TypeORM DataSource fits). */
interface SqlClient {
  query<T = unknown>(sql: string): Promise<T>;
}

/**
 * Waits until another session of `db`'s database waits on a lock: the positive signal that a request
 * is held inside its handler by a lock the test took (a row or table lock in an open transaction).
 */
export async function waitForLockWaiter(db: SqlClient, what: string, timeoutMs = 20_000): Promise<void> {
  await waitFor(
    async () => {
      const [{ n }] = await db.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
      );
      return n >= 1 ? true : null;
    },
    timeoutMs,
    what,
  );
}
