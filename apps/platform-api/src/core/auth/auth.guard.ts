import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard as PassportAuthGuard } from '@nestjs/passport';
import { DomainError } from '@app/service-kit';
import { type AuthenticatedRequest, PUBLIC_ROUTE, REQUIRED_FEATURES } from './auth.decorators.js';
import type { AuthContext } from './auth-context.js';

/**
 * The one guard of every route: public routes pass; others need a valid JWT whose session lives
 * (401 otherwise) and every feature named by `@RequireFeatures` (403 otherwise).
 */
@Injectable()
export class AuthGuard extends PassportAuthGuard('jwt') {
  constructor(private readonly reflector: Reflector) {
    super({ property: 'auth', session: false });
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    await super.canActivate(context);
    const auth: AuthContext = context.switchToHttp().getRequest<AuthenticatedRequest>().auth;
    const required = this.reflector.getAllAndOverride<string[]>(REQUIRED_FEATURES, targets) ?? [];
    if (required.length && !auth.can(...required)) {
      throw DomainError.forbidden(`missing required features: ${required.join(', ')}`);
    }
    return true;
  }

  handleRequest<T>(err: unknown, user: T): T {
    if (err instanceof DomainError) throw err;
    if (err || !user) throw DomainError.unauthorized('unauthorized');
    return user;
  }
}
