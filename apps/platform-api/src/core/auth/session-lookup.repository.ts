import { Injectable } from '@nestjs/common';
import { type Db, queryPrepared } from '@app/service-kit';

export interface LiveSessionRow {
  userId: string;
  tenantId: string;
  expiresAt: Date;
  /** The user's email, null when the user is deleted (GET /auth/profile answers from it: no SQL per call). */
  email: string | null;
}

interface SessionRow {
  user_id: string;
  tenant_id: string;
  expires_at: Date;
  email: string | null;
}

/**
 * Reads sessions for the per-request check (modules/auth's SessionsRepository writes them). Looked up
 * by id alone: the session is what tells the tenant.
 */
@Injectable()
export class SessionLookupRepository {
  /**
   * The session, if it exists in an active tenant, with its user's email. The tenant check covers a
   * login that raced a deactivation (its row was inserted after the deactivation deleted the tenant's
   * sessions).
   */
  async findLive(db: Db, sessionId: string): Promise<LiveSessionRow | null> {
    const [row] = await queryPrepared<SessionRow>(
      db,
      `SELECT s.user_id, s.tenant_id, s.expires_at, u.email FROM sessions s
         JOIN tenants t ON t.id = s.tenant_id AND t.is_active
         LEFT JOIN users u ON u.id = s.user_id AND u.tenant_id = s.tenant_id AND u.deleted_at IS NULL
        WHERE s.id = $1`,
      [sessionId],
    );
    return row ? { userId: row.user_id, tenantId: row.tenant_id, expiresAt: row.expires_at, email: row.email } : null;
  }
}
