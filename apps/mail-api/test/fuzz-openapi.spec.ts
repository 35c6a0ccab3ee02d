import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { fuzzCoverageGaps, fuzzSelfTestMisses, FuzzSelfTestModule, fuzzWholeApp } from '@app/service-kit/testing';
import type { FuzzOperation, FuzzResponse, OpenApiDocument } from '@app/service-kit/testing';
import { TrackingLinks } from '../src/modules/engagement/tracking-links.js';
import { UnsubscribeLinks } from '../src/modules/unsubscribe/unsubscribe-links.js';
import { insertEmails, insertVerifiedDomain } from './support/delivery-fixtures.js';
import { bearer, createProject } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

/**
 * Issue #19, 2 and #29, 6: every operation of /openapi.json called with generated bad input, and
 * every route of the app's Express route table must be one of those operations. Path ids are real
 * ids of the caller's own resources of the route's kind (so the handler runs, not just the 404). No
 * answer may be a 5xx, every 4xx is the documented envelope, every 2xx body fits its documented
 * schema. Small in `npm test`; `npm run fuzz` runs the same with FUZZ_RUNS=150.
 */

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

describe('fuzzing every mail-api operation from its OpenAPI document (issue #19, #29)', () => {
  let t: MailTestApp;
  let doc: OpenApiDocument;
  let secretKey: string;
  /** Real ids of the caller's own resources, by the route's first path segment, then parameter name. */
  const idsByResource: Record<string, Record<string, string[]>> = {};

  beforeAll(async () => {
    // A high rate limit: the fuzzer must reach the handlers, not the limiter.
    t = await startMailApp({ env: { MAIL_RATE_LIMIT_PER_MINUTE: '1000000' }, extraModules: [FuzzSelfTestModule] });
    doc = (await request(t.url).get('/openapi.json').expect(200)).body as OpenApiDocument;
    const project = await createProject(t, 'fuzz');
    secretKey = project.secretKey;
    const auth = bearer(secretKey);
    const ds = t.app.get(DataSource);
    const created = async (path: string, body: object): Promise<string> => {
      const res = await request(t.url).post(path).set(auth).send(body);
      const id = (res.body.data?.id ?? res.body.id) as unknown;
      if (res.status >= 300 || typeof id !== 'string') throw new Error(`fixture ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return id;
    };
    // A verified sender domain (the campaign needs one) and one pending verification.
    await insertVerifiedDomain(ds, project.id, 'fuzz.example.com');
    const contact = await created('/contacts', { email: 'fuzz@example.com', data: { plan: 'pro' } });
    const template = await created('/templates', { name: 'fuzz', subject: 'Hi {{email}}', body: '<p>x</p>' });
    const domain = await created('/domains', { domain: 'pending.fuzz.example.com' });
    const segment = await created('/segments', { name: 'fuzz', type: 'STATIC' });
    await request(t.url)
      .post(`/segments/${segment}/members`)
      .set(auth)
      .send({ emails: ['fuzz@example.com'] })
      .expect(200);
    const campaign = await created('/campaigns', {
      name: 'fuzz',
      subject: 'Hi',
      body: '<p>x</p>',
      from: 'news@fuzz.example.com',
      audienceType: 'ALL',
    });
    const workflow = await created('/workflows', { name: 'fuzz', eventName: 'fuzz', steps: [{ id: 'end', type: 'EXIT', config: {} }] });
    await request(t.url).post('/suppressions').set(auth).send({ email: 'suppressed@example.com' }).expect(201);
    const [emailId] = await insertEmails(ds, project.id, [{ to: 'fuzz@example.com', contactId: contact }]);
    const tracking = t.app.get(TrackingLinks);
    const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
    const tracked = { projectId: project.id, emailId: emailId ?? '' };
    idsByResource.contacts = { id: [contact] };
    idsByResource.templates = { id: [template] };
    idsByResource.domains = { id: [domain] };
    idsByResource.segments = { id: [segment] };
    idsByResource.campaigns = { id: [campaign] };
    idsByResource.workflows = { id: [workflow] };
    idsByResource.suppressions = { email: ['suppressed@example.com'] };
    idsByResource.unsubscribe = { token: [t.app.get(UnsubscribeLinks).tokenFor(project.id, contact)] };
    idsByResource.t = { token: [tokenOf(tracking.openUrl(tracked)), tokenOf(tracking.clickUrl(tracked, 'https://example.com/x'))] };
  });
  afterAll(async () => {
    await t?.close();
  });

  const knownIds = (operation: FuzzOperation) => idsByResource[operation.path.split('/')[1] ?? ''] ?? {};

  it('self-test: a route that throws is a 500 finding, a 2xx off its schema a schema finding (the fuzzer can fail)', async () => {
    const misses = await fuzzSelfTestMisses({ baseUrl: t.url, headers: () => bearer(secretKey), errorShapeProblem: mailErrorShapeProblem });
    expect(misses).toEqual([]);
  });

  it('fuzzes every route of the route table: no 5xx, only the documented error envelope, 2xx bodies fit their schema', async () => {
    const result = await fuzzWholeApp(
      { baseUrl: t.url, doc, headers: () => bearer(secretKey), knownIds, errorShapeProblem: mailErrorShapeProblem },
      8,
    );
    // Tied to the app: a route served but not in /openapi.json (so not fuzzed) fails here, and every
    // read that documents a JSON 2xx answered one (its plain request runs first) with the body checked.
    expect(fuzzCoverageGaps(t.app, doc, result)).toEqual({ findings: [], unfuzzed: [], readsNotSchemaChecked: [], undocumented2xx: [] });
  }, 600_000);
});
