import { type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

export const PUBLIC_ROUTE = 'auth:public';

/** No authentication needed (probes, login, public lookups). Each app's auth guard honours it. */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

type Handler = ReturnType<ExecutionContext['getHandler']>;
type ControllerClass = ReturnType<ExecutionContext['getClass']>;

/** Per handler and controller: metadata is set when the classes load and never changes after. */
const publicRoutes = new WeakMap<Handler, Map<ControllerClass, boolean>>();

/**
 * Whether the route of `context` is `@Public()` (on the handler or its controller), remembered per
 * route: the auth guards ask on every request, and reading reflect-metadata walks prototype chains.
 */
export function isPublicRoute(reflector: Reflector, context: ExecutionContext): boolean {
  const handler = context.getHandler();
  const controller = context.getClass();
  let byController = publicRoutes.get(handler);
  if (!byController) publicRoutes.set(handler, (byController = new Map<ControllerClass, boolean>()));
  let isPublic = byController.get(controller);
  if (isPublic === undefined) {
    isPublic = reflector.getAllAndOverride<boolean | undefined>(PUBLIC_ROUTE, [handler, controller]) === true;
    byController.set(controller, isPublic);
  }
  return isPublic;
}
