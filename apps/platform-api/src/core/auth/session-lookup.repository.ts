import { Injectable } from '@nestjs/common';
import { type Db, queryPrepared } from '@app/service-kit';

export interface LiveSessionRow {
  userId: string;
  tenantId: string;
  expiresAt: Date;
}

interface SessionRow {
  user_id: string;
  tenant_id: string;
  expires_at: Date;
}

/**
 * Reads sessions for the per-request check (modules/auth's SessionsRepository writes them). Looked up
 * by id alone: the session is what tells the tenant.
 */
@Injectable()
export class SessionLookupRepository {
  /**
   * The session, if it exists in an active tenant. The tenant check covers a login that raced a
   * deactivation (its row was inserted after the deactivation deleted the tenant's sessions).
   */
  async findLive(db: Db, sessionId: string): Promise<LiveSessionRow | null> {
    const [row] = await queryPrepared<SessionRow>(
      db,
      `SELECT s.user_id, s.tenant_id, s.expires_at FROM sessions s
         JOIN tenants t ON t.id = s.tenant_id AND t.is_active
        WHERE s.id = $1`,
      [sessionId],
    );
    return row ? { userId: row.user_id, tenantId: row.tenant_id, expiresAt: row.expires_at } : null;
  }
}
