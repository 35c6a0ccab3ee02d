import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { routeTable, type RouteEntry } from '@app/service-kit/testing';
import { insertVerifiedDomain } from './support/delivery-fixtures.js';
import { bearer, createProject } from './support/mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './support/mail-test-app.js';

/**
 * Issue #19, 3: project isolation, generated from the app's route table. Project A owns one resource
 * of every kind, each carrying a unique marker; project B's secret key then calls EVERY route:
 * routes with an id get A's id (404 or 403, never A's data, and A's resource is unchanged after),
 * lists must not show A's marker, and writes that name other resources in their body get A's ids.
 * A route the tables below do not cover fails the test, so a new route cannot be forgotten.
 */

/** Routes that need no key at all, and why; any other route must refuse a caller without a key. */
const PUBLIC_ROUTES: Record<string, string> = {
  'GET /healthz': 'liveness probe',
  'GET /readyz': 'readiness probe',
  'GET /metrics': 'Prometheus scrape (cluster-internal)',
  'GET /unsubscribe/:token': 'signed unsubscribe link',
  'POST /unsubscribe/:token': 'RFC 8058 one-click unsubscribe',
};
/** Public route families matched by prefix (documentation, dashboards with their own token, signed tracking links). */
const PUBLIC_PREFIXES = [
  'GET /docs',
  'GET /openapi',
  'GET /admin/queues',
  'POST /admin/queues',
  'PUT /admin/queues',
  'DELETE /admin/queues',
  'GET /t/',
  'POST /t/',
];

interface OwnedResource {
  id: string;
  /** Read A's resource back with A's key (null: it is gone). */
  readBack: () => Promise<unknown>;
}

/** Id routes whose refusal is not the plain 404 NOT_FOUND, and why. */
const ID_ROUTE_REFUSALS: Record<string, string> = {};

describe('project isolation matrix over every route (issue #19)', () => {
  let t: MailTestApp;
  let routes: RouteEntry[];
  let keyA: string;
  let keyB: string;
  const marker = `iso${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const B_DOMAIN = `b-${randomUUID().slice(0, 8)}.example.com`;
  const owned: Record<string, OwnedResource> = {};

  /** A digest of every row of project A in every table with a project_id column. */
  async function projectDigest(projectId: string): Promise<Record<string, string>> {
    const ds = t.app.get((await import('typeorm')).DataSource);
    const tables: { table_name: string }[] = await ds.query(
      `SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'project_id' ORDER BY 1`,
    );
    const digest: Record<string, string> = {};
    for (const { table_name } of tables) {
      const [row] = await ds.query(
        `SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) AS d FROM "${table_name}" x WHERE project_id = $1`,
        [projectId],
      );
      digest[table_name] = row.d;
    }
    return digest;
  }
  let projectA: string;

  const asA = () => bearer(keyA);
  const asB = () => bearer(keyB);

  beforeAll(async () => {
    t = await startMailApp({ env: { MAIL_RATE_LIMIT_PER_MINUTE: '1000000' } });
    routes = routeTable(t.app);
    const a = await createProject(t, 'A');
    keyA = a.secretKey;
    projectA = a.id;
    const b = await createProject(t, 'B');
    keyB = b.secretKey;
    // B has its own verified sender domain: a refusal of B's write is then for isolation, not for a
    // sender B could not use anyway.
    await insertVerifiedDomain(t.app.get((await import('typeorm')).DataSource), b.id, B_DOMAIN);

    const created = async (path: string, body: object): Promise<string> => {
      const res = await request(t.url).post(path).set(asA()).send(body);
      if (res.status >= 300) throw new Error(`fixture ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      const id = (res.body.data?.id ?? res.body.id) as string | undefined;
      if (!id) throw new Error(`fixture ${path}: no id in ${JSON.stringify(res.body)}`);
      return id;
    };
    const readBack = (path: string) => async () => {
      const res = await request(t.url).get(path).set(asA());
      return res.status === 404 ? null : res.body;
    };
    const add = async (resource: string, body: object) => {
      const id = await created(`/${resource}`, body);
      owned[resource] = { id, readBack: readBack(`/${resource}/${id}`) };
    };

    await add('contacts', { email: `${marker}@a.example.com`, data: { marker } });
    await add('templates', { name: marker, subject: marker, body: `<p>${marker}</p>` });
    await add('domains', { domain: `${marker}.example.com` });
    // A's suppressed address: DELETE /suppressions/:email names it by address, not id.
    const suppressed = `${marker}-suppressed@a.example.com`;
    await request(t.url).post('/suppressions').set(asA()).send({ email: suppressed }).expect(201);
    owned.suppressions = {
      id: suppressed,
      readBack: async () => (await request(t.url).get('/suppressions').set(asA()).query({ search: marker })).body,
    };
    await request(t.url)
      .post('/v1/track')
      .set(asA())
      .send({ email: `${marker}@a.example.com`, event: marker })
      .expect(200);
    if (routes.some((r) => r.path.startsWith('/segments'))) {
      await add('segments', { name: marker, type: 'STATIC' });
      await request(t.url)
        .post(`/segments/${owned.segments.id}/members`)
        .set(asA())
        .send({ emails: [`${marker}@a.example.com`] });
    }
    if (routes.some((r) => r.path.startsWith('/workflows'))) {
      await add('workflows', { name: marker, eventName: marker, steps: [{ id: 'end', type: 'EXIT', config: {} }] });
    }
    if (routes.some((r) => r.path.startsWith('/campaigns'))) {
      // A's campaign is a DRAFT: creating one needs a verified sender domain, which this fixture makes
      // through the database (the domain flow itself is covered by domains.spec.ts).
      const ds = t.app.get((await import('typeorm')).DataSource);
      await ds.query(`UPDATE domains SET status = 'VERIFIED', verified_at = now() WHERE id = $1`, [owned.domains.id]);
      await add('campaigns', {
        name: marker,
        subject: marker,
        body: `<p>${marker}</p>`,
        from: `news@${marker}.example.com`,
        audienceType: 'ALL',
      });
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  const isPublic = (route: RouteEntry) => route.key in PUBLIC_ROUTES || PUBLIC_PREFIXES.some((p) => route.key.startsWith(p));
  const concrete = (route: RouteEntry, ids: Record<string, string>) =>
    route.path.replace(/:(\w+)/g, (_, name: string) => ids[name] ?? randomUUID());
  const call = (method: string, path: string, headers: Record<string, string>, body?: object) => {
    const req = request(t.url)[method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](path).set(headers);
    return body === undefined ? req : req.send(body);
  };

  it('lists its public routes exactly, and every other route refuses a caller without a key', async () => {
    for (const route of routes.filter((r) => !isPublic(r))) {
      const res = await call(route.method, concrete(route, {}), {});
      expect({ route: route.key, status: res.status }).toEqual({ route: route.key, status: 401 });
    }
  });

  /** A body that passes validation, so only the project scope can refuse the call. */
  const validBodyFor = (route: RouteEntry): object | undefined => {
    if (route.method === 'GET') return undefined;
    if (route.path.endsWith('/members')) return { emails: ['b@b.example.com'] };
    if (route.path.endsWith('/test')) return { email: 'b@b.example.com' };
    if (route.method === 'PATCH') return { name: 'b' };
    return {};
  };

  it("never answers project A's data to project B, on any route with an id", async () => {
    const withIds = routes.filter((r) => !isPublic(r) && (r.params.includes('id') || r.key === 'DELETE /suppressions/:email'));
    const missing = withIds.map((r) => r.path.split('/')[1] ?? '').filter((resource) => !owned[resource]);
    expect({ routesWithoutFixture: [...new Set(missing)] }).toEqual({ routesWithoutFixture: [] });
    const untouched = await projectDigest(projectA);
    // The digest can fail: it covers A's rows (an empty digest would prove nothing).
    expect(untouched.contacts).not.toBe('d41d8cd98f00b204e9800998ecf8427e');
    const refusals: Record<string, string> = {};
    for (const route of withIds) {
      const resource = route.path.split('/')[1];
      const before = await owned[resource].readBack();
      const res = await call(
        route.method,
        concrete(route, { id: owned[resource].id, email: owned[resource].id }),
        asB(),
        validBodyFor(route),
      );
      refusals[route.key] = `${res.status} ${res.body?.error?.code}`;
      expect(JSON.stringify(res.body)).not.toContain(marker);
      expect(await owned[resource].readBack()).toEqual(before);
    }
    // The specific refusal: A's resource does not exist for B (decisions.md: another project's id is a
    // 404), so neither a validation error nor B's own missing sender domain can pass for isolation.
    expect(refusals).toEqual(Object.fromEntries(withIds.map((r) => [r.key, ID_ROUTE_REFUSALS[r.key] ?? '404 NOT_FOUND'])));
    // No row of project A changed, in any table (emails, recipients, executions... included).
    expect(await projectDigest(projectA)).toEqual(untouched);
  });

  it("never lists project A's data to project B", async () => {
    const lists = routes.filter((r) => !isPublic(r) && r.method === 'GET' && r.params.length === 0);
    expect(lists.length).toBeGreaterThanOrEqual(4);
    for (const route of lists) {
      const res = await call('GET', route.path, asB());
      expect({ route: route.key, leaks: JSON.stringify(res.body).includes(marker) }).toEqual({ route: route.key, leaks: false });
      // The same list with A's key does show A's data where the route lists resources: the marker check can fail.
      if (route.path === '/contacts') expect(JSON.stringify((await call('GET', route.path, asA())).body)).toContain(marker);
    }
  });

  /** Writes whose body names other resources: each gets A's ids from B. Every other write must be listed below with why it cannot reach another project. */
  const CROSS_REFERENCES: Record<string, () => object> = {
    'POST /v1/send': () => ({ to: 'b@b.example.com', from: `hi@${B_DOMAIN}`, template: owned.templates.id }),
    'POST /campaigns': () => ({
      name: 'b',
      subject: 'b',
      body: 'b',
      from: `news@${B_DOMAIN}`,
      audienceType: 'SEGMENT',
      segmentId: owned.segments?.id,
    }),
    'POST /workflows': () => ({
      name: 'b',
      eventName: 'x',
      enabled: true,
      steps: [{ id: 's', type: 'SEND_EMAIL', config: { templateId: owned.templates.id } }],
    }),
  };
  const CROSS_REFERENCE_REFUSALS: Record<string, { status: number; code: string; fields: string[] }> = {
    'POST /v1/send': { status: 404, code: 'NOT_FOUND', fields: [] },
    'POST /campaigns': { status: 422, code: 'VALIDATION_ERROR', fields: ['segmentId:segmentExists'] },
    'POST /workflows': { status: 422, code: 'VALIDATION_ERROR', fields: ['steps[0].config.templateId:templateNotFound'] },
  };
  const OWN_PROJECT_ONLY: Record<string, string> = {
    'POST /contacts': 'creates or updates a contact of the caller project by email',
    'POST /templates': 'creates a template of the caller project',
    'POST /domains': 'adds a domain to the caller project',
    'POST /segments':
      "creates a segment of the caller project; a campaign.<id> filter naming another project's campaign selects nobody (engagement-analytics.spec)",
    'POST /v1/track': "records an event on the caller project's contact by email",
    'POST /v1/verify': 'checks an address; reads no project data',
    'POST /suppressions': "adds an address to the caller project's suppression list",
    'POST /suppressions/import': "adds addresses to the caller project's suppression list",
  };

  it('refuses writes of project B that name project A resources in their body', async () => {
    const writes = routes.filter((r) => !isPublic(r) && r.method !== 'GET' && r.params.length === 0);
    const uncovered = writes.filter((r) => !(r.key in CROSS_REFERENCES) && !(r.key in OWN_PROJECT_ONLY)).map((r) => r.key);
    expect({ uncoveredWrites: uncovered }).toEqual({ uncoveredWrites: [] });
    const untouched = await projectDigest(projectA);
    for (const route of writes.filter((r) => r.key in CROSS_REFERENCES)) {
      const res = await call(route.method, route.path, asB(), CROSS_REFERENCES[route.key]());
      // The specific refusal: A's resource does not exist for B (not a validation or sender error).
      const fields = ((res.body?.error?.errors ?? []) as { field: string; code: string }[]).map((e) => `${e.field}:${e.code}`);
      expect({ route: route.key, status: res.status, code: res.body?.error?.code, fields }).toEqual({
        route: route.key,
        ...CROSS_REFERENCE_REFUSALS[route.key],
      });
      expect(JSON.stringify(res.body)).not.toContain(marker);
    }
    expect(await projectDigest(projectA)).toEqual(untouched);
  });
});
