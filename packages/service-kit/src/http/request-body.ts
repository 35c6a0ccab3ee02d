import { Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import bodyParser from 'body-parser';
import type { Request, RequestHandler, Response } from 'express';
import { ErrorCode, type FieldError } from '@app/contracts';
import { DomainError } from '../errors/domain-error.js';
import { routeMetadata } from './route-metadata.js';

export const BODY_LIMIT = 'http:body-limit';

/** A route that accepts larger bodies than the app's default (e.g. `/v1/send` with attachments). */
export const BodyLimit = (limit: string) => SetMetadata(BODY_LIMIT, limit);

/** The body limit of an app's routes unless the app or the route says otherwise. */
export const DEFAULT_BODY_LIMIT = '1mb';

/** Deeper JSON than any of our bodies needs; recursive code further on (validation, logging) stays safe. */
export const MAX_BODY_DEPTH = 64;

export interface RequestBodyOptions {
  /** Largest JSON / form body a route accepts unless it says otherwise with `@BodyLimit`. */
  defaultLimit: string;
  /** Status of a refused input (NUL characters, nesting): the app's validation status (platform 400, mail 422). */
  invalidInputStatus: 400 | 422;
}

/**
 * Parses JSON and form bodies inside the route's pipeline instead of as Express middleware, so that:
 * - the app's own guards run first: an unauthenticated request is refused before its body is read;
 * - each route has its own size limit (`@BodyLimit`), 1 MB elsewhere, so only the routes that need
 *   large bodies make the event loop parse them;
 * - a malformed body fails inside the route, where the route's exception filter shapes the error
 *   (the `{ok: false, error}` routes of the platform).
 * It then refuses input Postgres or recursive code cannot take: NUL characters anywhere (query,
 * path or body; Postgres rejects 0x00 in text) and JSON nested deeper than `MAX_BODY_DEPTH`.
 *
 * A guard, bound after the app's authentication guard on every route that reads the request
 * (`bindRouteGuards`), rather than an interceptor: a request without a body (every GET) passes synchronously, and Nest's
 * interceptor chain costs a measurable share of a small request even when it does nothing.
 */
@Injectable()
export class RequestBodyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly options: RequestBodyOptions,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    // The HTTP arguments are (req, res, next); `switchToHttp()` would attach three new closures to
    // the context on every request to hand out the same two.
    const req = context.getArgByIndex<Request>(0);
    if (req.url.includes('%00')) {
      this.refuse(findNul({ query: req.query, params: req.params }) ?? { field: 'url', depth: false });
    }
    if (!hasBody(req)) return true;
    return this.parse(context, req, context.getArgByIndex<Response>(1));
  }

  private async parse(context: ExecutionContext, req: Request, res: Response): Promise<boolean> {
    const limit = routeMetadata<string>(this.reflector, context, BODY_LIMIT) ?? this.options.defaultLimit;
    await readRequestBody(req, res, limit);
    if (req.body !== undefined && typeof req.body === 'object' && req.body !== null) {
      const problem = inspectBody(req.body as object);
      if (problem) this.refuse(problem);
    }
    return true;
  }

  private refuse(problem: InputProblem): never {
    // Same field-error codes and messages as the DTO validators (`hasNoNulCharacter`: mail-api's text validators).
    const detail: FieldError = problem.depth
      ? { field: problem.field, message: `${problem.field} is nested deeper than ${MAX_BODY_DEPTH} levels`, code: 'maxDepth' }
      : { field: problem.field, message: `${problem.field} must not contain NUL characters`, code: 'hasNoNulCharacter' };
    throw new DomainError(ErrorCode.ValidationError, `validation failed: ${detail.message}`, {
      status: this.options.invalidInputStatus,
      details: [detail],
    });
  }
}

/** The parsers of a limit (JSON, then forms), shared: body-parser's parsers keep no state between requests. */
const parsersByLimit = new Map<string, RequestHandler[]>();

function parsersFor(limit: string): RequestHandler[] {
  let parsers = parsersByLimit.get(limit);
  if (!parsers) {
    parsers = [bodyParser.json({ limit }), bodyParser.urlencoded({ limit, extended: true })];
    parsersByLimit.set(limit, parsers);
  }
  return parsers;
}

/** The read of each request's body, kept so that a second reader gets the first one's outcome. */
const bodyReads = new WeakMap<Request, Promise<void>>();

/**
 * Reads a JSON or form body into `req.body` (up to `limit`), once per request: a later call gets the
 * outcome of the first, the body or the same error (http-errors: 400 malformed, 413 too large, 415),
 * since a request's stream can be read only once. The RequestBodyGuard reads through it; so does a
 * route's own early answer in front of its Nest pipeline (FeatureCheckFastPath in the platform), which
 * leaves any failure to the route's guard. The first reader's limit applies: both use the route's.
 */
export function readRequestBody(req: Request, res: Response, limit: string): Promise<void> {
  let read = bodyReads.get(req);
  if (!read) {
    read = parseBody(req, res, parsersFor(limit));
    bodyReads.set(req, read);
  }
  return read;
}

/**
 * Runs the parsers in turn, as callbacks under one promise: the read is on every request with a body,
 * and a promise per parser (plus an async function around them) cost microtask turns each.
 */
function parseBody(req: Request, res: Response, parsers: RequestHandler[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let next = 0;
    const step = (error?: unknown): void => {
      // body-parser's errors are http-errors objects (status, type, expose): normalizeError maps them.
      if (error) return reject(error instanceof Error ? error : new Error('body parser failed'));
      // A body one parser has read to its end is skipped by the next ("body already parsed"): not
      // calling it spares its content-type match on every JSON request.
      if (next === parsers.length || req.readableEnded) return resolve();
      try {
        parsers[next++](req, res, step);
      } catch (thrown) {
        reject(thrown instanceof Error ? thrown : new Error('body parser failed'));
      }
    };
    step();
  });
}

/** What body-parser itself checks first: a body is announced by Content-Length or chunked encoding. */
function hasBody(req: Request): boolean {
  return (
    req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0')
  );
}

interface InputProblem {
  field: string;
  depth: boolean;
}

interface PathNode {
  parent: PathNode | null;
  key: string | number;
}

/** The first NUL character or excess nesting in a parsed body, found without recursion. */
export function inspectBody(body: object): InputProblem | null {
  return walk(body, true);
}

function findNul(input: Record<string, unknown>): InputProblem | null {
  return walk(input, false, true);
}

function walk(root: object, checkDepth: boolean, skipRootSegment = false): InputProblem | null {
  const stack: { value: unknown; path: PathNode | null; depth: number }[] = [{ value: root, path: null, depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return { field: fieldName(path, skipRootSegment), depth: false };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (checkDepth && depth >= MAX_BODY_DEPTH) return { field: fieldName(path, skipRootSegment), depth: true };
    const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((item, i) => [i, item]) : Object.entries(value);
    for (const [key, item] of entries) {
      const node: PathNode = { parent: path, key };
      if (typeof key === 'string' && key.includes('\u0000')) return { field: fieldName(node, skipRootSegment), depth: false };
      stack.push({ value: item, path: node, depth: depth + 1 });
    }
  }
  return null;
}

/** `a.b[0].c`, the field notation of validation errors; `body` for the body itself. */
function fieldName(path: PathNode | null, skipRootSegment: boolean): string {
  const keys: (string | number)[] = [];
  for (let node = path; node; node = node.parent) keys.unshift(node.key);
  if (skipRootSegment) keys.shift();
  let field = '';
  for (const key of keys) {
    const name = typeof key === 'number' ? '' : key.replaceAll('\u0000', '\\u0000');
    field += typeof key === 'number' ? `[${key}]` : field ? `.${name}` : name;
  }
  return field || (skipRootSegment ? 'url' : 'body');
}
