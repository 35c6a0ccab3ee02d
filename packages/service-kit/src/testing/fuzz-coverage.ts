import { Controller, Get, Module, Param, type INestApplication } from '@nestjs/common';
import {
  fuzzOperations,
  fuzzSettings,
  operationsOf,
  type FuzzOperation,
  type FuzzRunResult,
  type FuzzTarget,
  type OpenApiDocument,
} from './openapi-fuzz.js';
import { routeTable, unfuzzedRoutes, type RouteEntry } from './route-table.js';

/**
 * What both apps' fuzz specs share: the self-test that shows the fuzzer can fail, the routes every
 * service-kit app serves but does not fuzz, and the coverage checks after a run.
 */

const SELF_TEST_PREFIX = '/__fuzz-self-test';

/**
 * Registered only in a fuzz spec: a route that throws, one whose 2xx body breaks its schema by a
 * field's type, and one that answers a field its schema does not name.
 */
@Controller('__fuzz-self-test')
class FuzzSelfTestController {
  @Get('throws/:id') boom(@Param('id') id: string): never {
    throw new Error(`self-test ${id.length}`);
  }
  @Get('shape/:id') shape(@Param('id') id: string): { id: number } {
    return { id: id.length };
  }
  @Get('extra/:id') extra(@Param('id') id: string): { id: string; secret: string } {
    return { id, secret: 'not in the document' };
  }
}

/** Add to the app under test (`extraModules`) so `fuzzSelfTestMisses` has routes to find. */
@Module({ controllers: [FuzzSelfTestController] })
export class FuzzSelfTestModule {}

const SELF_TEST_DOC = {
  paths: {
    [`${SELF_TEST_PREFIX}/throws/{id}`]: {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 200: { description: 'never' } },
      },
    },
    [`${SELF_TEST_PREFIX}/shape/{id}`]: {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 200: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Shape' } } } } },
      },
    },
    [`${SELF_TEST_PREFIX}/extra/{id}`]: {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 200: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Shape' } } } } },
      },
    },
  },
  components: { schemas: { Shape: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } } },
} as unknown as OpenApiDocument;

/** The findings the self-test must produce, in order: the operation and how its problem starts. */
const SELF_TEST_FINDINGS: [string, RegExp][] = [
  [`GET ${SELF_TEST_PREFIX}/throws/{id}`, /^answered 500/],
  [`GET ${SELF_TEST_PREFIX}/shape/{id}`, /^200 body does not match its schema: data\/id must be string/],
  [`GET ${SELF_TEST_PREFIX}/extra/{id}`, /^200 body does not match its schema: data must NOT have additional properties/],
];

/**
 * Fuzzes the self-test routes (FuzzSelfTestModule) with the app's headers and error shape and
 * answers what went wrong: a route that throws must be a 500 finding and a 2xx off its schema (a
 * wrong type, a field the document does not name) a schema finding, each with the run's seed, and nothing else. Empty: the fuzzer can fail.
 */
export async function fuzzSelfTestMisses(target: Pick<FuzzTarget, 'baseUrl' | 'headers' | 'errorShapeProblem'>): Promise<string[]> {
  const seed = 1;
  const { findings } = await fuzzOperations({ ...target, doc: SELF_TEST_DOC, numRuns: 3, seed });
  const misses: string[] = [];
  SELF_TEST_FINDINGS.forEach(([operation, problem], i) => {
    const found = findings[i];
    if (found?.operation !== operation || !problem.test(found.problem) || found.seed !== seed)
      misses.push(`expected ${operation} ${problem} with seed ${seed}, got ${JSON.stringify(found ?? null)}`);
  });
  for (const extra of findings.slice(SELF_TEST_FINDINGS.length)) misses.push(`unexpected finding ${JSON.stringify(extra)}`);
  return misses;
}

/** `skip` for the app's own fuzz run: the self-test routes have their own test. */
function skipFuzzSelfTest(operation: FuzzOperation): string | null {
  return operation.path.startsWith(SELF_TEST_PREFIX) ? 'the self-test routes (fuzzSelfTestMisses)' : null;
}

/**
 * Routes every service-kit app serves but does not fuzz, each with why. Everything else in the
 * route table must be fuzzed.
 */
export function servedNotFuzzed(route: RouteEntry): string | null {
  if (route.path.startsWith(SELF_TEST_PREFIX)) return 'the self-test routes (fuzzSelfTestMisses)';
  if (/^\/(docs|openapi)/.test(route.path)) return 'the OpenAPI document and its viewer (static, read to drive the fuzz test)';
  if (route.path === '/metrics') return 'Prometheus text, left out of the API document; reads no input (ops-metrics specs)';
  if (route.path.startsWith('/admin/queues'))
    return 'the Bull Board dashboard (a third-party app, its own token; ops-queue-dashboard specs)';
  return null;
}

export interface FuzzCoverageGaps {
  /** The run's findings: any 5xx, 4xx outside the error shape, 2xx off its schema, timeout. */
  findings: FuzzRunResult['findings'];
  /** Routes served (the app's Express route table) but not fuzzed: not in /openapi.json, or skipped. */
  unfuzzed: string[];
  /** Fuzzed reads that document a JSON 2xx but never had a 2xx body checked against it. */
  readsNotSchemaChecked: string[];
  /**
   * 2xx answers the document leaves without a body description (`200 GET /x`): a JSON one must carry its
   * schema, another its content type; only 202, 204 and 205 may be documented without content.
   */
  undocumented2xx: string[];
}

/** Every documented 2xx of `doc` that says nothing of its body (see FuzzCoverageGaps.undocumented2xx). */
export function undocumented2xxAnswers(doc: OpenApiDocument): string[] {
  const gaps: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths).filter(([p]) => !p.startsWith(SELF_TEST_PREFIX)))
    for (const [method, operation] of Object.entries(methods))
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (!status.startsWith('2') || ['202', '204', '205'].includes(status)) continue;
        const content = Object.entries(response.content ?? {});
        if (content.length === 0 || content.some(([type, media]) => type.includes('json') && !media.schema))
          gaps.push(`${status} ${method.toUpperCase()} ${path}`);
      }
  return gaps;
}

/**
 * What a full fuzz run of `app` left open; a passing spec expects every list empty. Tied to the
 * app: a route served but not in /openapi.json fails `unfuzzed`; every read that documents a JSON
 * 2xx must have answered one (its plain request runs first) with the body checked; every 2xx the
 * document names must say what its body is.
 */
export function fuzzCoverageGaps(app: INestApplication, doc: OpenApiDocument, result: FuzzRunResult): FuzzCoverageGaps {
  const unfuzzed = unfuzzedRoutes(routeTable(app), result.fuzzed, servedNotFuzzed);
  const reads = operationsOf(doc)
    .filter((o) => o.method === 'get' && Object.keys(o.responseSchemas).some((k) => k.startsWith('2')))
    .map((o) => `GET ${o.path}`)
    .filter((name) => result.fuzzed.includes(name));
  const readsNotSchemaChecked = reads.filter((name) => !result.schemaChecked.includes(name));
  return { findings: result.findings, unfuzzed, readsNotSchemaChecked, undocumented2xx: undocumented2xxAnswers(doc) };
}

/**
 * The app's own fuzz run: every operation of `doc` but the self-test ones, `defaultRuns` cases each
 * in `npm test` (FUZZ_RUNS and FUZZ_SEED under `npm run fuzz`), four operations at a time (a case
 * mostly waits on Postgres, Redis or argon2's threads). Logs what it did and its slowest operations.
 */
export async function fuzzWholeApp(
  target: Omit<FuzzTarget, 'numRuns' | 'seed' | 'skip' | 'concurrency'>,
  defaultRuns: number,
): Promise<FuzzRunResult> {
  const { numRuns, seed } = fuzzSettings(defaultRuns);
  const result = await fuzzOperations({ ...target, numRuns, seed, concurrency: 4, skip: skipFuzzSelfTest });
  console.log(
    `fuzz: ${result.operations} operations, ${result.requests} requests, ${result.schemaChecked.length} with 2xx bodies checked; slowest ${JSON.stringify(result.timings.slice(0, 8))}`,
  );
  return result;
}
