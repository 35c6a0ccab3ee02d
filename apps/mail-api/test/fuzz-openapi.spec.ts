import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Module, Param } from '@nestjs/common';
import request from 'supertest';
import { fuzzOperations, fuzzSettings, type FuzzResponse, type OpenApiDocument } from '@app/service-kit/testing';
import { bearer, createProject } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

/**
 * Issue #19, 2: every operation of /openapi.json called with generated bad input. No answer may be a
 * 5xx, and every 4xx must be the documented envelope. Bounded here (fixed seed, few runs per
 * operation); `npm run fuzz` runs the same with FUZZ_RUNS raised.
 */

/** Registered only in this test: a route that throws, to prove the fuzzer reports a 500. */
@Controller('__fuzz-self-test')
class ThrowingController {
  @Get(':id') boom(@Param('id') id: string): never {
    throw new Error(`self-test ${id.length}`);
  }
}
@Module({ controllers: [ThrowingController] })
class ThrowingModule {}

const SELF_TEST_DOC = {
  paths: {
    '/__fuzz-self-test/{id}': {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 200: { description: 'never' } },
      },
    },
  },
} as OpenApiDocument;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** decisions.md "Mail": {success: false, error: {code, message, statusCode, requestId, ...}, message, timestamp}. */
export function mailErrorShapeProblem(res: FuzzResponse): string | null {
  const body = res.body as Record<string, unknown> | null;
  if (!res.contentType.includes('application/json')) return `content type ${res.contentType}`;
  if (!body || typeof body !== 'object') return 'not an object';
  const error = body.error as Record<string, unknown> | undefined;
  if (body.success !== false) return 'success is not false';
  if (!error || typeof error !== 'object') return 'no error object';
  if (typeof error.code !== 'string' || !/^[A-Z_]+$/.test(error.code)) return 'error.code';
  if (typeof error.message !== 'string') return 'error.message';
  if (error.statusCode !== res.status) return 'error.statusCode differs from the status';
  if (typeof error.requestId !== 'string') return 'error.requestId';
  if (body.message !== error.message) return 'message differs from error.message';
  if (typeof body.timestamp !== 'string' || !ISO.test(body.timestamp)) return 'timestamp';
  return null;
}

describe('fuzzing every mail-api operation from its OpenAPI document (issue #19)', () => {
  let t: MailTestApp;
  let doc: OpenApiDocument;
  let secretKey: string;
  const knownIds: Record<string, string[]> = {};

  beforeAll(async () => {
    // A high rate limit: the fuzzer must reach the handlers, not the limiter.
    t = await startMailApp({ env: { MAIL_RATE_LIMIT_PER_MINUTE: '1000000' }, extraModules: [ThrowingModule] });
    doc = (await request(t.url).get('/openapi.json').expect(200)).body as OpenApiDocument;
    ({ secretKey } = await createProject(t, 'fuzz'));
    const auth = bearer(secretKey);
    const contact = await request(t.url)
      .post('/contacts')
      .set(auth)
      .send({ email: 'fuzz@example.com', data: { plan: 'pro' } });
    const template = await request(t.url).post('/templates').set(auth).send({ name: 'fuzz', subject: 'Hi {{email}}', body: '<p>x</p>' });
    const domain = await request(t.url).post('/domains').set(auth).send({ domain: 'fuzz.example.com' });
    // A campaign and a workflow too: their routes with an id (stats, links, executions) then reach their handlers.
    const campaign = await request(t.url)
      .post('/campaigns')
      .set(auth)
      .send({ name: 'fuzz', subject: 'Hi', body: '<p>x</p>', from: 'news@fuzz.example.com', audienceType: 'ALL' });
    const workflow = await request(t.url)
      .post('/workflows')
      .set(auth)
      .send({ name: 'fuzz', eventName: 'fuzz', steps: [{ id: 'end', type: 'EXIT', config: {} }] });
    knownIds.id = [contact.body.id, template.body.id, domain.body.id, campaign.body.data?.id, workflow.body.id].filter(
      (id): id is string => typeof id === 'string',
    );
    expect(knownIds.id).toHaveLength(5);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('self-test: a route that throws is reported as a 500 finding (the fuzzer can fail)', async () => {
    const result = await fuzzOperations({
      baseUrl: t.url,
      doc: SELF_TEST_DOC,
      headers: () => bearer(secretKey),
      knownIds,
      errorShapeProblem: mailErrorShapeProblem,
      numRuns: 3,
      seed: 1,
    });
    expect(result.findings).toEqual([
      expect.objectContaining({ operation: 'GET /__fuzz-self-test/{id}', problem: expect.stringMatching(/^answered 500/), seed: 1 }),
    ]);
  });

  it('answers no 5xx and only the documented error envelope', async () => {
    const { numRuns, seed } = fuzzSettings(8);
    const result = await fuzzOperations({
      baseUrl: t.url,
      doc,
      headers: () => bearer(secretKey),
      knownIds,
      errorShapeProblem: mailErrorShapeProblem,
      numRuns,
      seed,
      skip: (operation) => (operation.path.startsWith('/__fuzz-self-test') ? 'the self-test route (above)' : null),
    });
    expect(result.operations).toBeGreaterThanOrEqual(15);
    expect(result.findings).toEqual([]);
  }, 300_000);
});
