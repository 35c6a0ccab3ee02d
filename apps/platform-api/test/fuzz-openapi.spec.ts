import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { fuzzOperations, fuzzSettings, type FuzzResponse, type OpenApiDocument } from '@app/service-kit/testing';
import { AuthService } from '../src/modules/auth/auth.service.js';
import { Factories, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/**
 * Issue #19, 2: every operation of /openapi.json called with generated bad input, as a super
 * administrator (so the fuzzer reaches every handler). No answer may be a 5xx; every 4xx is
 * `{error}` (or `{ok: false, error}` on the routes platform-api.md names), with `code` and `details`
 * the only other fields. Bounded here; `npm run fuzz` raises FUZZ_RUNS.
 */

const ERROR_FIELDS = new Set(['ok', 'error', 'code', 'details']);

export function platformErrorShapeProblem(res: FuzzResponse): string | null {
  if (!res.contentType.includes('application/json')) return `content type ${res.contentType}`;
  const body = res.body as Record<string, unknown> | null;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'not an object';
  // POST /ai_assistant/mcp speaks JSON-RPC: the MCP transport's own refusals (406, 415, parse errors) are
  // JSON-RPC error objects, as the protocol requires; the platform's 401/403/413 there are `{error}`.
  if (body.jsonrpc === '2.0') return jsonRpcErrorProblem(body);
  if (typeof body.error !== 'string' || body.error.length === 0) return 'error is not a string';
  if ('ok' in body && body.ok !== false) return 'ok is not false';
  if ('code' in body && typeof body.code !== 'string') return 'code is not a string';
  const extra = Object.keys(body).filter((k) => !ERROR_FIELDS.has(k));
  return extra.length > 0 ? `unexpected fields ${extra.join(', ')}` : null;
}

function jsonRpcErrorProblem(body: Record<string, unknown>): string | null {
  const error = body.error as { code?: unknown; message?: unknown } | undefined;
  if (!error || typeof error.code !== 'number' || typeof error.message !== 'string')
    return 'a JSON-RPC answer without {code, message} error';
  return Object.keys(body).every((k) => ['jsonrpc', 'error', 'id'].includes(k)) ? null : 'unexpected JSON-RPC fields';
}

describe('fuzzing every platform-api operation from its OpenAPI document (issue #19)', () => {
  let t: PlatformTestApp;
  let doc: OpenApiDocument;
  const knownIds: Record<string, string[]> = {};
  let user: { email: string; password: string };

  beforeAll(async () => {
    t = await startPlatformApp();
    doc = (await request(t.url).get('/openapi.json').expect(200)).body as OpenApiDocument;
    const factories = Factories.of(t);
    const admin = await factories.loggedInUser(t, { isSuperAdmin: true });
    user = admin.user;
    const other = await factories.user(admin.tenant);
    const role = await factories.role(admin.tenant.id, { features: ['auth.roles.list'] });
    const ids = [admin.tenant.id, admin.tenant.organizationId, other.id, role.id];
    for (const name of ['id', 'userId', 'roleId', 'tenantId', 'organizationId', 'variantId']) knownIds[name] = ids;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A fresh session per operation (a fuzzed logout or password change must not starve the rest). */
  async function freshSession(): Promise<Record<string, string>> {
    const { token } = await t.app
      .get(AuthService)
      .login({ email: user.email, password: user.password, remember: false }, { ip: testIp(), userAgent: null });
    return { Authorization: `Bearer ${token}` };
  }

  it('answers no 5xx and only the documented error bodies', async () => {
    const { numRuns, seed } = fuzzSettings(6);
    const result = await fuzzOperations({
      baseUrl: t.url,
      doc,
      headers: freshSession,
      knownIds,
      errorShapeProblem: platformErrorShapeProblem,
      numRuns,
      seed,
    });
    expect(result.operations).toBeGreaterThanOrEqual(40);
    expect(result.findings).toEqual([]);
  }, 600_000);
});
