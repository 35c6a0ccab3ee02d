import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

type Handler = ReturnType<ExecutionContext['getHandler']>;
type ControllerClass = ReturnType<ExecutionContext['getClass']>;

/** Per handler, controller and key: decorators set metadata when the classes load and it never changes after. */
const remembered = new WeakMap<Handler, Map<ControllerClass, Map<string, unknown>>>();

/**
 * The metadata `key` of the route of `context`, the handler's overriding the controller's (Nest's
 * `getAllAndOverride`), remembered per route: guards ask on every request (`@Public()`, required
 * features, body limits, key kinds), and reading reflect-metadata walks prototype chains each time.
 */
export function routeMetadata<T>(reflector: Reflector, context: ExecutionContext, key: string): T | undefined {
  const handler = context.getHandler();
  const controller = context.getClass();
  let byController = remembered.get(handler);
  if (!byController) remembered.set(handler, (byController = new Map<ControllerClass, Map<string, unknown>>()));
  let byKey = byController.get(controller);
  if (!byKey) byController.set(controller, (byKey = new Map<string, unknown>()));
  if (!byKey.has(key)) byKey.set(key, reflector.getAllAndOverride<T | undefined>(key, [handler, controller]));
  return byKey.get(key) as T | undefined;
}
