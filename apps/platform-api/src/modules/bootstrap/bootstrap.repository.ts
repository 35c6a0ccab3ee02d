import { Injectable } from '@nestjs/common';
import { type Db, execute } from '@app/service-kit';

// Serialises concurrent bootstraps (several API replicas starting at once).
const BOOTSTRAP_LOCK_KEY = 727_101;

/** The bootstrap's own statement: it writes no table of its own (the owners' repositories do). */
@Injectable()
export class BootstrapRepository {
  /** A transaction-scoped advisory lock: a second replica's bootstrap waits for the first to commit. */
  async lock(tx: Db): Promise<void> {
    await execute(tx, 'SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_KEY]);
  }
}
