import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Request } from 'express';
import type { AuthContext } from './auth-context.js';

/** A request once the AuthGuard has passed it: the caller's context is on `auth`. */
export type AuthenticatedRequest = Request & { auth: AuthContext };

export { Public, PUBLIC_ROUTE } from '@app/service-kit';

export const REQUIRED_FEATURES = 'auth:required-features';

/** Features the caller must hold (all of them); enforced by the one global AuthGuard (403 when missing). */
export const RequireFeatures = (...features: string[]) => SetMetadata(REQUIRED_FEATURES, features);

/** The authenticated caller's context, set by the AuthGuard. */
export const CurrentAuth = createParamDecorator(
  // The request is the first HTTP argument: `switchToHttp()` would attach three closures to the context per call.
  (_data: unknown, ctx: ExecutionContext): AuthContext => ctx.getArgByIndex<AuthenticatedRequest>(0).auth,
);

/** The client's IP as Express derives it (honours `trust proxy`). */
export const ClientIp = createParamDecorator((_data: unknown, ctx: ExecutionContext): string => {
  const req = ctx.switchToHttp().getRequest<Request>();
  // Typed as always present; a request without a socket (tests, proxies of the adapter) has neither.
  return req.ip ?? (req.socket as Request['socket'] | undefined)?.remoteAddress ?? 'unknown';
});
