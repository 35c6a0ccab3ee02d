import { randomInt } from 'node:crypto';
import fc from 'fast-check';
import { ResponseSchemas } from './openapi-response-schemas.js';

/**
 * Request fuzzing driven by an app's own `/openapi.json`: every documented operation is called with
 * generated inputs (wrong types, missing and extra fields, huge, unicode and injection strings,
 * invalid ids) so a new route is fuzzed without anyone remembering to add it.
 */

type Schema = Record<string, unknown>;

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}

interface OpenApiOperation {
  operationId?: string;
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

export interface FuzzOperation {
  method: string;
  /** The OpenAPI path template, e.g. `/templates/{id}`. */
  path: string;
  pathParams: string[];
  queryParams: OpenApiParameter[];
  /** The JSON body schema ($refs resolved), or null when the operation takes no JSON body. */
  bodySchema: Schema | null;
  /** multipart/form-data or another non-JSON body: fuzzed with raw bytes only. */
  rawBody: boolean;
  /** The operation answers a stream (text/event-stream): a request may be cut off by the timeout. */
  streams: boolean;
  /** Documented JSON body schema ($refs kept) per response status (`200`, `201`, `2XX`, `default`). */
  responseSchemas: Record<string, Schema>;
}

export interface FuzzRequest {
  path: string;
  query: Record<string, string>;
  body: unknown;
  /** Send the body as raw text with this content type instead of JSON. */
  rawContentType?: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Strings that broke real services: SQL, template and path injection, control and odd unicode. */
export const HOSTILE_STRINGS = [
  "' OR '1'='1",
  "'; DROP TABLE users; --",
  '1; SELECT pg_sleep(5)',
  '${7*7}{{7*7}}<%= 7*7 %>',
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '../../../../etc/passwd',
  '%00%0d%0aSet-Cookie: x=1',
  '\u0000',
  '\u202e\u200b\ufeff',
  '😀'.repeat(50),
  'a'.repeat(5000),
  '{"$gt": ""}',
  '__proto__',
  'constructor',
  '-1',
  '9999999999999999999999',
  'NaN',
  'null',
  '[]',
  '00000000-0000-0000-0000-000000000000',
];

export function operationsOf(doc: OpenApiDocument): FuzzOperation[] {
  const operations: FuzzOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const parameters = operation.parameters ?? [];
      const content = operation.requestBody?.content ?? {};
      const json = content['application/json']?.schema;
      const responseTypes = Object.values(operation.responses ?? {}).flatMap((r) => Object.keys(r.content ?? {}));
      operations.push({
        method,
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? ''),
        queryParams: parameters.filter((p) => p.in === 'query'),
        bodySchema: json ? resolve(doc, json) : null,
        rawBody: !json && Object.keys(content).length > 0,
        streams: responseTypes.includes('text/event-stream') || /stream|chat/.test(path),
        responseSchemas: Object.fromEntries(
          Object.entries(operation.responses ?? {}).flatMap(([status, r]) => {
            const schema = r.content?.['application/json']?.schema;
            return schema ? [[status, schema]] : [];
          }),
        ),
      });
    }
  }
  return operations;
}

function resolve(doc: OpenApiDocument, schema: Schema, depth = 0): Schema {
  if (depth > 8) return {};
  const ref = schema.$ref;
  if (typeof ref === 'string') {
    const name = ref.split('/').pop() ?? '';
    return resolve(doc, doc.components?.schemas?.[name] ?? {}, depth + 1);
  }
  const out: Schema = { ...schema };
  if (schema.properties && typeof schema.properties === 'object') {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties as Record<string, Schema>).map(([k, v]) => [k, resolve(doc, v, depth + 1)]),
    );
  }
  if (schema.items && typeof schema.items === 'object') out.items = resolve(doc, schema.items as Schema, depth + 1);
  for (const key of ['allOf', 'oneOf', 'anyOf']) {
    const list = schema[key];
    if (Array.isArray(list)) out[key] = list.map((s: Schema) => resolve(doc, s, depth + 1));
  }
  return out;
}

const hostileString = fc.constantFrom(...HOSTILE_STRINGS);
const anyString = fc.oneof(
  hostileString,
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.uuid(),
  fc.constant(''),
);
const wrongType = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
  anyString,
);
/** One huge value: bodies near the size limits must be refused cleanly, not crash anything. */
const hugeString = fc.integer({ min: 10_000, max: 200_000 }).map((n) => 'x'.repeat(n));

/** A value that fits the schema, with a fair share of hostile strings where strings go. */
function fitting(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 4) return fc.constant(null);
  const variants = (schema.allOf ?? schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (Array.isArray(variants) && variants.length > 0) return fc.oneof(...variants.map((s) => fitting(s, depth + 1)));
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...(schema.enum as unknown[]));
  switch (schema.type) {
    case 'string':
      if (schema.format === 'uuid') return fc.oneof(fc.uuid(), anyString);
      if (schema.format === 'email') return fc.oneof(fc.emailAddress(), anyString);
      if (schema.format === 'date-time')
        return fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          anyString,
        );
      return anyString;
    case 'integer':
      return fc.oneof(fc.integer({ min: -5, max: 5000 }), fc.constant(Number.MAX_SAFE_INTEGER), fc.constant(-1));
    case 'number':
      return fc.oneof(fc.double({ noNaN: true }), fc.integer());
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(fitting((schema.items as Schema | undefined) ?? {}, depth + 1), { maxLength: 4 });
    case 'object':
    default: {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const entries = Object.entries(properties);
      if (entries.length === 0)
        return schema.type === 'object' ? fc.dictionary(fc.string({ maxLength: 8 }), wrongType, { maxKeys: 3 }) : wrongType;
      return fc.record(Object.fromEntries(entries.map(([k, v]) => [k, fitting(v, depth + 1)])));
    }
  }
}

/** A body made from the schema, then broken in one way (or not at all). */
function bodyFor(schema: Schema): fc.Arbitrary<unknown> {
  const base = fitting(schema);
  const properties = Object.keys(schema.properties ?? {});
  const withObject = (
    f: (body: Record<string, unknown>, key: string, value: unknown) => Record<string, unknown>,
    value: fc.Arbitrary<unknown>,
  ) =>
    fc
      .tuple(base, properties.length > 0 ? fc.constantFrom(...properties) : fc.constant('field'), value)
      .map(([body, key, v]) =>
        body && typeof body === 'object' && !Array.isArray(body) ? f({ ...(body as Record<string, unknown>) }, key, v) : body,
      );
  return fc.oneof(
    { weight: 3, arbitrary: base },
    // a field of the wrong type
    { weight: 3, arbitrary: withObject((b, k, v) => ({ ...b, [k]: v }), wrongType) },
    // a required field missing
    {
      weight: 2,
      arbitrary: withObject((b, k) => {
        delete b[k];
        return b;
      }, fc.constant(null)),
    },
    // unknown fields, including prototype keys
    {
      weight: 2,
      arbitrary: withObject(
        (b, _k, v) => ({ ...b, ...(v as object) }),
        fc.dictionary(fc.oneof(hostileString, fc.string({ maxLength: 8 })), wrongType, { maxKeys: 3 }),
      ),
    },
    // one huge string
    { weight: 1, arbitrary: withObject((b, k, v) => ({ ...b, [k]: v }), hugeString) },
    // not an object at all
    { weight: 1, arbitrary: wrongType },
  );
}

/** A generated value as query text (objects may have no prototype, so no String()). */
function asText(value: unknown): string {
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

function queryFor(params: OpenApiParameter[], knownIds: Record<string, string[]>): fc.Arbitrary<Record<string, string>> {
  const entries = params.map((p) => {
    const known = knownIds[p.name] ?? [];
    const generated = fc.oneof(anyString, fitting(p.schema ?? {}).map(asText));
    // A query id the caller really owns (`?id=` of platform's routes) reaches the handler's lookup.
    const value =
      known.length > 0 ? fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: generated }) : generated;
    return [p.name, fc.option(value, { nil: undefined })] as const;
  });
  const extra = fc.dictionary(fc.constantFrom('limit', 'cursor', 'page', 'pageSize', 'offset', 'sort', 'x'), anyString, { maxKeys: 2 });
  return fc.tuple(fc.record(Object.fromEntries(entries)), extra).map(([declared, more]) => {
    const query: Record<string, string> = { ...more };
    for (const [k, v] of Object.entries(declared)) if (v !== undefined) query[k] = String(v);
    return query;
  });
}

/**
 * Requests for one operation. `knownIds` maps a path parameter name to real ids of the caller's own
 * resources (so the fuzzer gets past the 404 and reaches the handler) - mixed with invalid ids.
 */
export function requestsFor(operation: FuzzOperation, knownIds: Record<string, string[]> = {}): fc.Arbitrary<FuzzRequest> {
  const pathValues = operation.pathParams.map((name) => {
    const known = knownIds[name] ?? [];
    return known.length > 0
      ? fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: anyString })
      : anyString;
  });
  const body: fc.Arbitrary<Pick<FuzzRequest, 'body' | 'rawContentType'>> = operation.bodySchema
    ? bodyFor(operation.bodySchema).map((b) => ({ body: b }))
    : operation.rawBody
      ? fc.oneof(
          fc.string({ maxLength: 200 }).map((s) => ({ body: s, rawContentType: 'multipart/form-data; boundary=xyz' })),
          fc.constant({
            body: '--xyz\r\nContent-Disposition: form-data; name="file"\r\n\r\n\u0000\r\n--xyz--',
            rawContentType: 'multipart/form-data; boundary=xyz',
          }),
        )
      : fc.oneof(
          fc.constant({ body: undefined }),
          bodyFor({ type: 'object' }).map((b) => ({ body: b })),
        );
  return fc.tuple(fc.tuple(...pathValues), queryFor(operation.queryParams, knownIds), body).map(([values, query, b]) => {
    let path = operation.path;
    operation.pathParams.forEach((name, i) => {
      path = path.replace(`{${name}}`, encodeURIComponent(String(values[i] ?? '')) || '%20');
    });
    return { path, query, ...b };
  });
}

/**
 * The plain request of an operation: the first real id per path (and known query) parameter, no body. Run
 * first (a fast-check example), so a read answers its 2xx and its body is checked against the schema;
 * null when a path parameter has no real id.
 */
export function plainRequestFor(operation: FuzzOperation, knownIds: Record<string, string[]> = {}): FuzzRequest | null {
  let path = operation.path;
  for (const name of operation.pathParams) {
    const id = knownIds[name]?.[0];
    if (id === undefined) return null;
    path = path.replace(`{${name}}`, encodeURIComponent(id));
  }
  const query: Record<string, string> = {};
  for (const p of operation.queryParams) {
    const id = knownIds[p.name]?.[0];
    if (id !== undefined) query[p.name] = id;
  }
  return { path, query, body: undefined };
}

export interface FuzzResponse {
  status: number;
  contentType: string;
  body: unknown;
}

export interface FuzzTarget {
  baseUrl: string;
  doc: OpenApiDocument;
  /**
   * Headers of an authenticated caller, asked before every request with the operation's previous
   * answer (a spec may cache a session per operation and renew it after a 401: a fuzzed logout).
   */
  headers: (operation: FuzzOperation, previous: FuzzResponse | null) => Promise<Record<string, string>> | Record<string, string>;
  /**
   * Real ids per path parameter name: one map for every operation, or a map per operation (so
   * `/campaigns/{id}` gets campaign ids and `/templates/{id}` template ids).
   */
  knownIds?: Record<string, string[]> | ((operation: FuzzOperation) => Record<string, string[]>);
  /** Answers why a 4xx body is not in the app's documented error shape, or null when it is. */
  errorShapeProblem: (response: FuzzResponse) => string | null;
  /** Operations left out, each with the reason (e.g. the endpoint that ends the caller's session). */
  skip?: (operation: FuzzOperation) => string | null;
  numRuns: number;
  seed: number;
  timeoutMs?: number;
  /** Operations fuzzed at the same time (default 1); deletes still run after everything else. */
  concurrency?: number;
}

export interface FuzzFinding {
  operation: string;
  request: FuzzRequest;
  problem: string;
  /** The run's seed: `FUZZ_SEED=<seed>` replays it. */
  seed: number;
}

async function send(
  target: FuzzTarget,
  operation: FuzzOperation,
  req: FuzzRequest,
  previous: FuzzResponse | null,
): Promise<FuzzResponse | 'timeout'> {
  const url = new URL(target.baseUrl + req.path);
  for (const [k, v] of Object.entries(req.query)) url.searchParams.set(k, v);
  const headers: Record<string, string> = { ...(await target.headers(operation, previous)) };
  let body: string | undefined;
  if (req.body !== undefined && operation.method !== 'get') {
    body = req.rawContentType ? asText(req.body) : JSON.stringify(req.body);
    headers['content-type'] = req.rawContentType ?? 'application/json';
  }
  try {
    const res = await fetch(url, {
      method: operation.method.toUpperCase(),
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(target.timeoutMs ?? 10_000),
    });
    const contentType = res.headers.get('content-type') ?? '';
    if (operation.streams && contentType.includes('text/event-stream')) {
      await res.body?.cancel();
      return { status: res.status, contentType, body: null };
    }
    const text = await res.text();
    let parsed: unknown = text;
    if (contentType.includes('json')) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: res.status, contentType, body: parsed };
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return 'timeout';
    // fetch reports a reset connection as "fetch failed": name the cause, it is the finding.
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`request failed: ${cause?.code ?? ''} ${cause?.message ?? (error as Error).message}`, { cause: error });
  }
}

/**
 * Runs every operation `numRuns` times with generated requests (fixed seed: a CI failure replays).
 * Answers the findings: any 5xx, any 4xx outside the error shape, any request that did not answer in
 * time (a non-streaming one). fast-check shrinks each failing request to a minimal one.
 */
export interface FuzzRunResult {
  findings: FuzzFinding[];
  requests: number;
  operations: number;
  /** `METHOD /path/{param}` of every operation fuzzed (compare with the route table: unfuzzedRoutes). */
  fuzzed: string[];
  skipped: string[];
  /** Milliseconds spent per fuzzed operation, slowest first: where a slow run goes. */
  timings: { operation: string; ms: number }[];
  /** Operations whose 2xx bodies were validated against a documented schema. */
  schemaChecked: string[];
}

export async function fuzzOperations(target: FuzzTarget): Promise<FuzzRunResult> {
  const findings: FuzzFinding[] = [];
  const fuzzed: string[] = [];
  const timings: { operation: string; ms: number }[] = [];
  const schemas = new ResponseSchemas(target.doc);
  const skipped: string[] = [];
  const short: string[] = [];
  let requests = 0;
  let operations = 0;
  // Deletes last: a DELETE of the real fixture would turn every later read of it into a 404.
  const all = operationsOf(target.doc);
  const ordered = [...all.filter((o) => o.method !== 'delete'), ...all.filter((o) => o.method === 'delete')];
  fuzzed.push(...ordered.filter((o) => !target.skip?.(o)).map((o) => `${o.method.toUpperCase()} ${o.path}`));
  const fuzzOne = async (operation: FuzzOperation): Promise<void> => {
    const name = `${operation.method.toUpperCase()} ${operation.path}`;
    const reason = target.skip?.(operation);
    if (reason) {
      skipped.push(`${name}: ${reason}`);
      return;
    }
    operations += 1;
    const started = performance.now();
    const knownIds = typeof target.knownIds === 'function' ? target.knownIds(operation) : target.knownIds;
    const plain = plainRequestFor(operation, knownIds);
    let previous: FuzzResponse | null = null;
    const result = await fc.check(
      fc.asyncProperty(requestsFor(operation, knownIds), async (req) => {
        requests += 1;
        const res = await send(target, operation, req, previous);
        previous = res === 'timeout' ? null : res;
        if (res === 'timeout') {
          if (operation.streams) return true;
          throw new Error('no answer within the timeout');
        }
        if (res.status >= 500) throw new Error(`answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
        if (res.status >= 400) {
          const problem = target.errorShapeProblem(res);
          if (problem) throw new Error(`${res.status} outside the error shape (${problem}): ${JSON.stringify(res.body).slice(0, 300)}`);
        }
        if (res.status >= 200 && res.status < 300) {
          const problem = schemas.problem(operation, res);
          if (problem) throw new Error(`${problem}: ${JSON.stringify(res.body).slice(0, 300)}`);
        }
        return true;
      }),
      { numRuns: target.numRuns, seed: target.seed, endOnFailure: true, maxSkipsPerRun: 0, examples: plain ? [[plain]] : [] },
    );
    timings.push({ operation: name, ms: Math.round(performance.now() - started) });
    if (!result.failed && result.numRuns < target.numRuns) short.push(`${name} (${result.numRuns})`);
    if (result.failed && result.counterexample) {
      const [req] = result.counterexample;
      findings.push({
        operation: name,
        request: req,
        problem: result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance),
        seed: target.seed,
      });
    }
  };
  // A few operations at a time: while one waits on Postgres or argon2's thread pool, another runs.
  // Each operation's own cases stay in order (fast-check's run), so a replay with the seed is the same per operation.
  const inParallel = async (list: FuzzOperation[]) => {
    const queue = [...list];
    const lane = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await fuzzOne(next);
    };
    await Promise.all(Array.from({ length: Math.max(1, target.concurrency ?? 1) }, lane));
  };
  await inParallel(ordered.filter((o) => o.method !== 'delete'));
  await inParallel(ordered.filter((o) => o.method === 'delete'));
  // Every passing operation ran all its cases: fewer (zero runs, nothing fuzzed) is not a pass.
  if (operations === 0 || short.length > 0) {
    throw new Error(`the fuzzer ran ${operations} operations; fewer than ${target.numRuns} cases for: ${short.join(', ')}`);
  }
  timings.sort((x, y) => y.ms - x.ms);
  return { findings, requests, operations, fuzzed, skipped, timings, schemaChecked: [...schemas.checked] };
}

/**
 * Fuzz run sizes: bounded in `npm test`, larger under `npm run fuzz` (FUZZ_RUNS, FUZZ_SEED). A run of
 * zero cases proves nothing, so FUZZ_RUNS below 1 (or not a number) throws instead of passing green.
 */
export function fuzzSettings(defaultRuns: number): { numRuns: number; seed: number } {
  const numRuns = Number(process.env.FUZZ_RUNS ?? defaultRuns);
  if (!Number.isInteger(numRuns) || numRuns < 1) {
    throw new Error(
      `FUZZ_RUNS must be a whole number of at least 1 (got ${JSON.stringify(process.env.FUZZ_RUNS)}): zero cases prove nothing`,
    );
  }
  // A new seed each run (so runs explore new inputs), printed so a failure replays with FUZZ_SEED.
  const seed = process.env.FUZZ_SEED === undefined ? randomInt(2 ** 31 - 1) : Number(process.env.FUZZ_SEED);
  if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be an integer (got ${JSON.stringify(process.env.FUZZ_SEED)})`);
  console.log(`fuzz: ${numRuns} runs per operation, seed ${seed} (replay: FUZZ_SEED=${seed} FUZZ_RUNS=${numRuns})`);
  return { numRuns, seed };
}
