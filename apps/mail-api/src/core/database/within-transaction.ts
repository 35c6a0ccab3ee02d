import type { EntityManager } from 'typeorm';
import type { Db } from '@app/service-kit';

/**
 * Runs `work` in the caller's transaction when `db` is one (its writes then commit with the caller's),
 * otherwise in a new transaction of its own. For statements that must share a transaction (a lock
 * and what it guards) whoever the caller is.
 */
export function withinTransaction<T>(db: Db, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  if ('createQueryRunner' in db) return db.transaction(work);
  if (db.queryRunner?.isTransactionActive) return work(db);
  return db.transaction(work);
}
