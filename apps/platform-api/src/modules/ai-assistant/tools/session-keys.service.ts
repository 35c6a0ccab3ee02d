import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { duringAuthentication } from '../../../core/auth/auth-lookup.js';
import { isForeignKeyViolation } from '../../../core/database/sql-helpers.js';
import { scopeOf } from '../../../core/scope/tenant-scope.js';
import { SessionKeysRepository } from './session-keys.repository.js';

/** How long a session key lives: one working session with the assistant. */
export const SESSION_KEY_TTL_SECONDS = 2 * 3600;
const TOKEN_PREFIX = 'aisk_';
const TOKEN_FORMAT = /^aisk_[A-Za-z0-9_-]{43}$/;
/** The key's reference to its login session (1763939400000-AiSessionKeyLoginSession). */
const LOGIN_SESSION_FK = 'ai_session_keys_login_session_id_fkey';

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Session keys (POST /ai_assistant/session-key): a random token (256 bits, only its SHA-256 stored),
 * bound to the user, tenant and login session that made it, living two hours or until that login
 * session ends (logout, password reset: the key then answers 401 like an expired one). Passed as `_sessionToken` with tool
 * calls, it ties them to one assistant session: their pending actions carry its id as session id.
 */
@Injectable()
export class SessionKeysService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: SessionKeysRepository,
  ) {}

  async create(auth: AuthContext): Promise<{ sessionToken: string; expiresAt: string }> {
    const sessionToken = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const scope = scopeOf(auth);
    const key = await this.dataSource
      .transaction(async (tx) => {
        await this.repository.deleteExpiredOfUser(tx, scope);
        return this.repository.insert(tx, scope, {
          organizationId: auth.organizationId,
          loginSessionId: auth.sessionId,
          tokenHash: hashOf(sessionToken),
          ttlSeconds: SESSION_KEY_TTL_SECONDS,
        });
      })
      .catch((error: unknown) => {
        // The login session ended after this request was authenticated from the session cache.
        if (isForeignKeyViolation(error, LOGIN_SESSION_FK)) throw DomainError.unauthorized('session expired or revoked');
        throw error;
      });
    return { sessionToken, expiresAt: key.expiresAt };
  }

  /** Whether a bearer token is shaped like a session key (else it may be a JWT). */
  static isSessionKey(token: string): boolean {
    return token.startsWith(TOKEN_PREFIX);
  }

  /**
   * Who a session key belongs to, for a caller known by nothing else (MCP clients): null when the key
   * is malformed, unknown, expired, or its user or tenant is gone. A database failure is 503.
   */
  async owner(token: string): Promise<{ userId: string; tenantId: string; organizationId: string | null; sessionId: string } | null> {
    if (!TOKEN_FORMAT.test(token)) return null;
    const key = await duringAuthentication(() => this.repository.findLiveForAuthentication(this.dataSource, hashOf(token)));
    return key && { userId: key.userId, tenantId: key.tenantId, organizationId: key.organizationId, sessionId: key.id };
  }

  /**
   * The session id of a token the caller made and that still lives. Anything else (malformed, expired,
   * another user's or tenant's) is the same 401 `invalid_session_token`; a database failure is 503.
   */
  async resolve(auth: AuthContext, token: string): Promise<{ sessionId: string }> {
    const key = TOKEN_FORMAT.test(token)
      ? await duringAuthentication(() => this.repository.findLive(this.dataSource, scopeOf(auth), hashOf(token)))
      : null;
    if (!key) throw new DomainError('invalid_session_token', 'invalid or expired session token', { status: 401 });
    return { sessionId: key.id };
  }
}
