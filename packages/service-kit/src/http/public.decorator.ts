import { type ExecutionContext, SetMetadata, type Type } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

export const PUBLIC_ROUTE = 'auth:public';

/** No authentication needed (probes, login, public lookups): bindRouteGuards binds no auth guard. */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

/** Whether a route handler is `@Public()`, on itself or on its controller (the handler's says last). */
export function isPublicHandler(reflector: Reflector, handler: ReturnType<ExecutionContext['getHandler']>, controller: Type): boolean {
  return reflector.getAllAndOverride<boolean | undefined>(PUBLIC_ROUTE, [handler, controller]) === true;
}

/** Whether the route of `context` is `@Public()` (on the handler or its controller). */
export function isPublicRoute(reflector: Reflector, context: ExecutionContext): boolean {
  return isPublicHandler(reflector, context.getHandler(), context.getClass());
}
