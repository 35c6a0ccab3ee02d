import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface LiveSessionRow {
  userId: string;
  tenantId: string;
  expiresAt: Date;
}

/** Reads sessions for the per-request check (the auth module's repositories write them). */
@Injectable()
export class SessionLookupRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The session, if it exists in an active tenant. The tenant check covers a login that raced a
   * deactivation (its row was inserted after the deactivation deleted the tenant's sessions).
   */
  async findLive(sessionId: string): Promise<LiveSessionRow | null> {
    const rows: { user_id: string; tenant_id: string; expires_at: Date }[] = await this.dataSource.query(
      `SELECT s.user_id, s.tenant_id, s.expires_at FROM sessions s
         JOIN tenants t ON t.id = s.tenant_id AND t.is_active
        WHERE s.id = $1`,
      [sessionId],
    );
    const row = rows[0];
    return row ? { userId: row.user_id, tenantId: row.tenant_id, expiresAt: row.expires_at } : null;
  }
}
