import { Injectable } from '@nestjs/common';
import { AuthGuard as PassportAuthGuard } from '@nestjs/passport';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';

/**
 * For routes marked `@Public()` that also serve more to a signed-in caller (file and image reads:
 * public partitions for anyone, the tenant's private files with a session). It runs the app's JWT
 * strategy (bearer header or `auth_token` cookie, live session, cached ACL) and sets `auth` to the
 * caller, or to null when there is no token or it is not valid: an expired cookie must not break a
 * public image, and a private file then answers 401 as it would to anyone without a session.
 *
 * Only a verdict about the caller (401) makes it anonymous: a failure to check (the database down,
 * 503 from the authenticator) is thrown, so a signed-in caller is never told to sign in again, nor
 * rate-limited as anonymous, because the database failed.
 */
@Injectable()
export class OptionalAuthGuard extends PassportAuthGuard('jwt') {
  constructor() {
    super({ property: 'auth', session: false });
  }

  handleRequest<T = AuthContext>(err: unknown, user: T | false): T | null {
    if (err instanceof DomainError && err.status === 401) return null;
    if (err instanceof Error) throw err;
    if (err) throw new Error('authentication failed', { cause: err });
    return user || null;
  }
}
