import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { DomainError, routeMetadata } from '@app/service-kit';
import { AccessAuthenticator } from './access-authenticator.service.js';
import type { AuthContext } from './auth-context.js';
import { type AuthenticatedRequest, REQUIRED_FEATURES } from './auth.decorators.js';

/**
 * The authentication guard, bound to every route that is not `@Public()` (bindRouteGuards, from
 * http-setup.ts, decides; public routes never meet it). A route needs a valid JWT whose session
 * lives (401 otherwise) and every feature named by `@RequireFeatures` (403 otherwise).
 *
 * It calls the authenticator directly rather than through passport: passport's per-request
 * machinery (a middleware built per call, strategy objects, callbacks) and the token's signature
 * check were most of an authenticated request's own CPU (bench/README.md, issue #18). The passport
 * 'jwt' strategy (JwtStrategy) stays for guards that want its optional flavour, on the same logic.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: AccessAuthenticator,
  ) {}

  /**
   * Synchronous for a caller whose session and ACL are cached (the authenticator answers without a
   * promise then); a promise only when something is loaded.
   */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    // The request is the first HTTP argument (`switchToHttp()` would attach three closures per request).
    const req = context.getArgByIndex<Request>(0);
    const auth = this.authenticator.authenticate(req);
    return auth instanceof Promise ? auth.then((loaded) => this.admit(context, req, loaded)) : this.admit(context, req, auth);
  }

  private admit(context: ExecutionContext, req: Request, auth: AuthContext | null): boolean {
    if (!auth) throw DomainError.unauthorized('unauthorized');
    (req as AuthenticatedRequest).auth = auth;
    const required = routeMetadata<string[]>(this.reflector, context, REQUIRED_FEATURES) ?? [];
    if (required.length && !auth.can(...required)) {
      throw DomainError.forbidden(`missing required features: ${required.join(', ')}`);
    }
    return true;
  }
}
