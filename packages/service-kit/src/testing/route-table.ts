import type { INestApplication } from '@nestjs/common';

/** One route as Express registered it: `GET /templates/:id`. */
export interface RouteEntry {
  method: string;
  path: string;
  /** `METHOD path`, the key isolation and fuzz tables use. */
  key: string;
  params: string[];
}

const API_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

interface ExpressLayer {
  route?: { path: string | RegExp | (string | RegExp)[]; methods: Record<string, boolean> };
}

/**
 * Every route the running app serves, read from Express's router: the route table itself, not a
 * list someone keeps, so a test generated from it covers a route the day it is added.
 */
export function routeTable(app: INestApplication): RouteEntry[] {
  const express = app.getHttpAdapter().getInstance() as { router?: { stack: ExpressLayer[] }; _router?: { stack: ExpressLayer[] } };
  const stack = (express.router ?? express._router)?.stack ?? [];
  const routes: RouteEntry[] = [];
  for (const layer of stack) {
    if (!layer.route) continue;
    const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
    for (const path of paths) {
      // A pattern is not an API route: the OpenAPI docs' gate (setupOpenApi) is the one there is.
      if (typeof path !== 'string') continue;
      for (const [method, on] of Object.entries(layer.route.methods)) {
        // `app.all()` mounts (a dashboard) register every verb Node knows; the API's verbs are these.
        if (!on || !API_METHODS.has(method)) continue;
        const upper = method.toUpperCase();
        routes.push({ method: upper, path, key: `${upper} ${path}`, params: [...path.matchAll(/:(\w+)/g)].map((m) => m[1] ?? '') });
      }
    }
  }
  return routes;
}

/** Express path `/templates/:id` as its OpenAPI template `/templates/{id}`. */
export function openApiPathOf(expressPath: string): string {
  return expressPath.replace(/:(\w+)/g, '{$1}');
}

/**
 * Routes of the running app (its Express route table) that no fuzzed operation covers, minus the
 * listed exclusions (each with its reason). A route served but missing from /openapi.json, or
 * skipped by the fuzz run, shows up here.
 */
export function unfuzzedRoutes(routes: RouteEntry[], fuzzed: string[], excluded: (route: RouteEntry) => string | null): string[] {
  const covered = new Set(fuzzed);
  return routes
    .filter((r) => !excluded(r))
    .map((r) => `${r.method} ${openApiPathOf(r.path)}`)
    .filter((key) => !covered.has(key));
}
