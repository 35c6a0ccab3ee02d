import { type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { routeMetadata } from './route-metadata.js';

export const PUBLIC_ROUTE = 'auth:public';

/** No authentication needed (probes, login, public lookups). Each app's auth guard honours it. */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

/** Whether the route of `context` is `@Public()` (on the handler or its controller). */
export function isPublicRoute(reflector: Reflector, context: ExecutionContext): boolean {
  return routeMetadata<boolean>(reflector, context, PUBLIC_ROUTE) === true;
}
