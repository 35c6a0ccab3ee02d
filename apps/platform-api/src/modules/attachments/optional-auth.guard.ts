import { Injectable } from '@nestjs/common';
import { AuthGuard as PassportAuthGuard } from '@nestjs/passport';
import type { AuthContext } from '../../core/auth/auth-context.js';

/**
 * For routes marked `@Public()` that also serve more to a signed-in caller (file and image reads:
 * public partitions for anyone, the tenant's private files with a session). It runs the app's JWT
 * strategy (bearer header or `auth_token` cookie, live session, cached ACL) and sets `auth` to the
 * caller, or to null when there is no token or it is not valid: an expired cookie must not break a
 * public image, and a private file then answers 401 as it would to anyone without a session.
 */
@Injectable()
export class OptionalAuthGuard extends PassportAuthGuard('jwt') {
  constructor() {
    super({ property: 'auth', session: false });
  }

  handleRequest<T = AuthContext>(_err: unknown, user: T | false): T | null {
    return user || null;
  }
}
