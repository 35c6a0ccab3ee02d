import type { CanActivate, ExecutionContext, INestApplication, Type } from '@nestjs/common';
import { GUARDS_METADATA, INTERCEPTORS_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { isPublicHandler } from './public.decorator.js';

/** The two guards of an app's routes: its authentication guard, then the request-body guard. */
export interface AppRouteGuards {
  authenticate: CanActivate;
  parseBody: CanActivate;
}

/** Per app, found from the request: `req.app` is the Express app that is serving it. */
const guardsOfApp = new WeakMap<object, AppRouteGuards>();

function guardsOf(context: ExecutionContext): AppRouteGuards {
  const guards = guardsOfApp.get(context.getArgByIndex<{ app: object }>(0).app);
  if (!guards) throw new Error('a route guard ran in an app that bindRouteGuards never saw');
  return guards;
}

// Route metadata belongs to the controller classes, which every app built in one process (tests, the
// bench) shares, so what a route carries is one of these two app-independent guards; each hands the
// request to the guard of the app that serves it.
const AUTHENTICATE: CanActivate = { canActivate: (context) => guardsOf(context).authenticate.canActivate(context) };
const PARSE_BODY: CanActivate = { canActivate: (context) => guardsOf(context).parseBody.canActivate(context) };

/** What was bound to each handler, so that a second app (or a second controller) cannot disagree. */
const boundHandlers = new WeakMap<object, string>();

/**
 * Gives each route, once at startup, the guards it needs, in this order:
 * - the app's authentication guard, unless the route is `@Public()` (on it or its controller);
 * - the request-body guard (bodies, NUL characters in the URL), unless the route reads nothing of
 *   the request: no parameter at all (body, query, path, request, custom) and no interceptor.
 *
 * They are route guards rather than global ones because Nest runs global guards through its async
 * guard pipeline on every request of every route, and on a public route that takes no input (the
 * probes) they decided nothing yet cost a tenth of the request (bench/README.md, "HTTP stack").
 * Every route of every controller is bound, so a new route is authenticated unless it says
 * `@Public()`. Guards a route declares itself (`@UseGuards` on the method) run after these; a
 * controller's own (`@UseGuards` on the class) run before them, as Nest runs class guards first.
 */
export function bindRouteGuards(app: INestApplication, guards: AppRouteGuards): void {
  guardsOfApp.set(app.getHttpAdapter().getInstance() as object, guards);
  const reflector = app.get(Reflector);
  const scanner = new MetadataScanner();
  for (const wrapper of new DiscoveryService(app.get(ModulesContainer)).getControllers()) {
    const controller = wrapper.metatype as Type | null;
    if (!controller) continue;
    const prototype = controller.prototype as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name];
      if (typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      const isPublic = isPublicHandler(reflector, handler, controller);
      const needed = [...(isPublic ? [] : [AUTHENTICATE]), ...(readsRequest(controller, name, handler) ? [PARSE_BODY] : [])];
      const decision = needed.map((guard) => (guard === AUTHENTICATE ? 'authenticate' : 'parse-body')).join(',');
      const earlier = boundHandlers.get(handler);
      if (earlier === decision) continue;
      if (earlier !== undefined) {
        throw new Error(
          `${controller.name}.${name} is a handler another controller shares with other guard needs (${earlier} / ${decision || 'none'}): give each controller its own method`,
        );
      }
      const own = (Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[] | undefined) ?? [];
      Reflect.defineMetadata(GUARDS_METADATA, [...needed, ...own], handler);
      boundHandlers.set(handler, decision);
    }
  }
}

/** Whether a route can see anything of the request: a parameter of any kind, or an interceptor. */
function readsRequest(controller: Type, name: string, handler: object): boolean {
  const parameters = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) as object | undefined) ?? {};
  const interceptors = [
    ...((Reflect.getMetadata(INTERCEPTORS_METADATA, controller) as unknown[] | undefined) ?? []),
    ...((Reflect.getMetadata(INTERCEPTORS_METADATA, handler) as unknown[] | undefined) ?? []),
  ];
  return Object.keys(parameters).length > 0 || interceptors.length > 0;
}
