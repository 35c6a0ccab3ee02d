import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { operationsOf, ResponseSchemas, type FuzzOperation, type OpenApiDocument } from '@app/service-kit/testing';
import { PasswordResetService } from '../src/modules/auth/password-reset.service.js';
import { Factories, login, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/**
 * Issue #29, 6: every 2xx of the account, directory and probe routes fits the schema /openapi.json
 * documents for it. The fuzzer checks whatever 2xx its generated input reaches; most writes need
 * input it never guesses (a password, a reset token, a refresh token), so here each route is called
 * once the way a client would, and its answer is checked with the fuzzer's own ajv check.
 */

const ACCOUNT_ROUTES = /^\/(healthz|readyz|auth\/|directory\/)/;
const SETTINGS = { groupOrder: ['a'], groupLabels: { a: 'A' }, itemLabels: {}, hiddenItems: ['x'], itemOrder: { a: ['x'] } };

type Call = { method: 'get' | 'post' | 'put' | 'delete'; path: string; query?: object; body?: object; form?: object; cookie?: string };

describe('2xx bodies of the account, directory and probe routes fit /openapi.json (issue #29)', () => {
  let t: PlatformTestApp;
  let doc: OpenApiDocument;
  let schemas: ResponseSchemas;
  let operations: Map<string, FuzzOperation>;
  const called = new Set<string>();

  beforeAll(async () => {
    t = await startPlatformApp();
    doc = (await request(t.url).get('/openapi.json').expect(200)).body as OpenApiDocument;
    schemas = new ResponseSchemas(doc);
    operations = new Map(operationsOf(doc).map((o) => [`${o.method.toUpperCase()} ${o.path}`, o]));
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Calls a route and answers its body after checking it against the documented 2xx schema. */
  async function answer(auth: Record<string, string>, call: Call, status = call.method === 'post' ? 201 : 200) {
    const name = `${call.method.toUpperCase()} ${call.path}`;
    let req = request(t.url)[call.method](call.path).set(auth).set('X-Forwarded-For', testIp());
    if (call.cookie) req = req.set('Cookie', call.cookie);
    if (call.query) req = req.query(call.query);
    if (call.form) req = req.type('form').send(call.form);
    else if (call.body) req = req.send(call.body);
    const res = await req;
    called.add(name);
    expect({ name, status: res.status }).toEqual({ name, status });
    const documented = Object.keys(doc.paths[call.path]?.[call.method]?.responses ?? {});
    expect({ name, documented: documented.includes(String(status)) }).toEqual({ name, documented: true });
    if (status < 300) {
      const operation = operations.get(name);
      const fuzzResponse = { status: res.status, contentType: String(res.headers['content-type'] ?? ''), body: res.body };
      expect({ name, problem: operation ? schemas.problem(operation, fuzzResponse) : 'not in the document' }).toEqual({
        name,
        problem: null,
      });
      expect({ name, schemaChecked: schemas.checked.has(name) }).toEqual({ name, schemaChecked: true });
    }
    return res;
  }

  it('auth, profile, locale, password reset and logout', async () => {
    const f = Factories.of(t);
    const { tenant, user, auth } = await f.loggedInUser(t, { features: ['auth.roles.list'] });
    const none = {};
    const loggedIn = await answer(none, { method: 'post', path: '/auth/login', form: { ...user, remember: 'true', redirect: '/x' } }, 200);
    expect(loggedIn.body).toEqual(expect.objectContaining({ redirect: '/x', refreshToken: expect.any(String) }));
    expect((await answer(none, { method: 'post', path: '/auth/login', form: user }, 200)).body.redirect).toBeNull();
    await answer(none, { method: 'post', path: '/auth/session/refresh', body: { refreshToken: loggedIn.body.refreshToken } }, 200);
    const cookie = String(loggedIn.headers['set-cookie']).match(/session_token=[^;]+/)?.[0] ?? '';
    await answer(none, { method: 'get', path: '/auth/session/refresh', cookie, query: { redirect: '/x' } }, 302);
    await answer(auth, { method: 'get', path: '/auth/profile' });
    await answer(auth, { method: 'post', path: '/auth/feature-check', body: { features: ['auth.roles.list', 'auth.users.list'] } }, 200);
    await answer(auth, { method: 'get', path: '/auth/locale' });
    expect((await answer(auth, { method: 'post', path: '/auth/locale', body: { locale: 'de' } })).body).toBe('de');
    await answer(none, { method: 'post', path: '/auth/reset', form: { email: user.email } }, 200);
    const issued = await t.app.get(PasswordResetService)['tokens'].issue(tenant.id, user.id, 'password_reset');
    await answer(none, { method: 'post', path: '/auth/reset/confirm', form: { token: issued.token, password: 'a-new-password' } }, 200);
    const fresh = { Authorization: `Bearer ${await login(t, user.email, 'a-new-password')}` };
    const changed = { email: `moved-${user.email}`, currentPassword: 'a-new-password' };
    await answer(fresh, { method: 'put', path: '/auth/profile', body: changed });
    await answer(fresh, { method: 'get', path: '/auth/logout' }, 302);
    const again = { Authorization: `Bearer ${await login(t, changed.email, 'a-new-password')}` };
    await answer(again, { method: 'post', path: '/auth/logout' }, 302);
  });

  it('sidebar preferences and variants, the feature catalogue and the backend chrome', async () => {
    const f = Factories.of(t);
    const { tenant, auth } = await f.loggedInUser(t, { features: ['auth.sidebar.manage', 'auth.acl.manage'] });
    const role = await f.role(tenant.id);
    await answer(auth, { method: 'get', path: '/auth/sidebar/preferences' });
    const path = '/auth/sidebar/preferences';
    const saved = await answer(auth, { method: 'put', path, body: { settings: SETTINGS, applyToRoles: [role.id] } });
    expect(saved.body.roles).toEqual(expect.arrayContaining([{ id: role.id, name: role.name, hasPreference: true }]));
    await answer(auth, { method: 'put', path, body: { scope: { type: 'role', roleId: role.id }, settings: SETTINGS } });
    await answer(auth, { method: 'get', path, query: { roleId: role.id } });
    await answer(auth, { method: 'delete', path, query: { roleId: role.id } });
    await answer(auth, { method: 'post', path: '/auth/sidebar/variants', body: { settings: SETTINGS, isActive: true } }, 200);
    await answer(auth, { method: 'post', path: '/auth/sidebar/variants', body: { name: 'second' } }, 200);
    expect((await answer(auth, { method: 'get', path: '/auth/sidebar/variants' })).body.variants).toHaveLength(2);
    await answer(auth, { method: 'get', path: '/auth/features' });
    await answer(auth, { method: 'get', path: '/auth/admin/nav' });
  });

  it('roles, users, their ACLs and consents', async () => {
    const f = Factories.of(t);
    const { tenant, auth } = await f.loggedInUser(t, { isSuperAdmin: true });
    const roleId = (await answer(auth, { method: 'post', path: '/auth/roles', body: { name: 'schema-role', tenantId: tenant.id } })).body
      .id;
    await answer(auth, { method: 'get', path: '/auth/roles', query: { tenantId: tenant.id } });
    await answer(auth, { method: 'put', path: '/auth/roles', body: { id: roleId, name: 'schema-role-2' } });
    await answer(auth, { method: 'put', path: '/auth/roles/acl', body: { roleId, features: ['auth.roles.list'], organizations: null } });
    await answer(auth, { method: 'get', path: '/auth/roles/acl', query: { roleId } });
    const created = { email: 'schema-user@example.com', password: 'password-123', roleIds: [roleId], tenantId: tenant.id };
    const userId = (await answer(auth, { method: 'post', path: '/auth/users', body: created })).body.id;
    const invitedId = (await answer(auth, { method: 'post', path: '/auth/users', body: { email: 'schema-invite@example.com' } })).body.id;
    await answer(auth, { method: 'post', path: '/auth/users/resend-invite', body: { id: invitedId } }, 200);
    await answer(auth, { method: 'get', path: '/auth/users', query: { tenantId: tenant.id } });
    await answer(auth, { method: 'put', path: '/auth/users', body: { id: userId, name: 'Schema User', organizationId: null } });
    await answer(auth, { method: 'put', path: '/auth/users/acl', body: { userId, features: ['auth.users.list'] } });
    await answer(auth, { method: 'get', path: '/auth/users/acl', query: { userId } });
    await answer(auth, { method: 'post', path: '/auth/users/consents', body: { userId, consentType: 'marketing', isGranted: true } });
    await answer(auth, { method: 'get', path: '/auth/users/consents', query: { userId } });
    await answer(auth, { method: 'delete', path: '/auth/users', query: { id: userId } });
    await answer(auth, { method: 'delete', path: '/auth/roles', query: { id: roleId } });
  });

  it('directory lookups and management, and the probes', async () => {
    const f = Factories.of(t);
    const tenant = await f.tenant();
    const { auth } = await f.loggedInUser(t, { isSuperAdmin: true }, tenant);
    await answer({}, { method: 'get', path: '/directory/tenants/lookup', query: { tenantId: tenant.id } });
    await answer({}, { method: 'get', path: '/directory/organizations/lookup', query: { slug: tenant.slug } });
    const tenantId = (await answer(auth, { method: 'post', path: '/directory/tenants', body: { name: 'schema tenant' } })).body.id;
    await answer(auth, { method: 'get', path: '/directory/tenants', query: { id: tenantId } });
    await answer(auth, { method: 'put', path: '/directory/tenants', body: { id: tenantId, name: 'schema tenant 2', isActive: false } });
    const orgs = '/directory/organizations';
    const orgId = (await answer(auth, { method: 'post', path: orgs, body: { name: 'schema org', tenantId } })).body.id;
    await answer(auth, { method: 'get', path: orgs, query: { tenantId } });
    await answer(auth, { method: 'put', path: orgs, body: { id: orgId, slug: 'schema-org-2', isActive: false } });
    await answer(auth, { method: 'delete', path: orgs, query: { id: orgId } });
    await answer(auth, { method: 'delete', path: '/directory/tenants', query: { id: tenantId } });
    await answer({}, { method: 'get', path: '/healthz' });
    await answer({}, { method: 'get', path: '/readyz' });
  });

  it('called every operation of these routes', () => {
    const documented = [...operations.keys()].filter((name) => ACCOUNT_ROUTES.test(name.split(' ')[1] ?? ''));
    expect(documented.filter((name) => !called.has(name))).toEqual([]);
  });
});
