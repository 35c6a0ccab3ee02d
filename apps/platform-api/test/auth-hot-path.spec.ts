import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Request } from 'express';
import request from 'supertest';
import { AccessAuthenticator } from '../src/core/auth/access-authenticator.service.js';
import { AuthContext } from '../src/core/auth/auth-context.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const b64url = (value: object | string) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** An HS256 token over `claims`, signed with `secret`. */
function signToken(claims: object, secret: string, header: object = { alg: 'HS256', typ: 'JWT' }): string {
  const body = `${b64url(header)}.${b64url(claims)}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as Record<string, unknown>;
}

/**
 * The authenticated request's hot path (issue #18): verified tokens are remembered per token, and
 * GET /auth/profile answers from the cached session. Neither may change what a request is allowed.
 */
describe('auth hot path: remembered tokens, profile from the session cache', () => {
  let t: PlatformTestApp;
  let f: Factories;
  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const profile = (token: string) => request(t.url).get('/auth/profile').set('Authorization', `Bearer ${token}`);

  it('a remembered token still stops working at its expiry', async () => {
    const me = await f.loggedInUser(t, { features: [] });
    const now = Math.floor(Date.now() / 1000);
    const shortLived = signToken({ ...claimsOf(me.token), iat: now, exp: now + 2 }, t.config.jwtSecret);
    await profile(shortLived).expect(200);
    await profile(shortLived).expect(200); // now remembered
    const deadline = Date.now() + 6000;
    while ((await profile(shortLived)).status === 200) {
      if (Date.now() > deadline) throw new Error('an expired token kept working');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await profile(shortLived).expect(401, { error: 'unauthorized' });
    await profile(me.token).expect(200);
  });

  it('a token with another signature, secret or algorithm is refused while the genuine one is remembered', async () => {
    const me = await f.loggedInUser(t, { features: [] });
    await profile(me.token).expect(200);
    const [header, body, signature] = me.token.split('.');
    const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    await profile(`${header}.${body}.${flipped}`).expect(401, { error: 'unauthorized' });
    await profile(signToken(claimsOf(me.token), 'not-the-secret')).expect(401, { error: 'unauthorized' });
    await profile(`${b64url({ alg: 'none', typ: 'JWT' })}.${body}.`).expect(401, { error: 'unauthorized' });
    // Claims changed under the genuine signature (another user's id) do not verify either.
    const other = await f.loggedInUser(t, { features: [] });
    await profile(`${header}.${b64url({ ...claimsOf(me.token), sub: other.user.id })}.${signature}`).expect(401);
    // A token for a session that does not exist, validly signed, is refused by the session check.
    await profile(signToken({ ...claimsOf(me.token), sid: '00000000-0000-4000-8000-000000000000' }, t.config.jwtSecret)).expect(401, {
      error: 'session expired or revoked',
    });
  });

  it('reads `Bearer` in any case, falls back to the auth_token cookie, and refuses a huge header without backtracking', async () => {
    const me = await f.loggedInUser(t, { features: [] });
    await request(t.url).get('/auth/profile').set('Authorization', `bearer ${me.token}`).expect(200);
    await request(t.url).get('/auth/profile').set('Authorization', `  BEARER   ${me.token}  `).expect(200);
    await request(t.url).get('/auth/profile').set('Authorization', 'Basic abc').set('Cookie', `auth_token=${me.token}`).expect(200);
    await request(t.url).get('/auth/profile').set('Authorization', 'Bearer').expect(401);
    await request(t.url).get('/auth/profile').set('Authorization', 'x'.repeat(15_000)).expect(401, { error: 'unauthorized' });
    await request(t.url)
      .get('/auth/profile')
      .set('Authorization', `Bearer ${'a'.repeat(15_000)}`)
      .expect(401, { error: 'unauthorized' });
  });

  it('GET /auth/profile answers the new email at once after the user changes it, or an administrator does', async () => {
    const me = await f.loggedInUser(t, { features: [] });
    expect((await profile(me.token).expect(200)).body).toEqual({ email: me.user.email, roles: [me.role.name] });
    const mine = `changed-${me.user.id.slice(0, 8)}@example.com`;
    await request(t.url).put('/auth/profile').set(me.auth).send({ email: mine, currentPassword: me.user.password }).expect(200);
    expect((await profile(me.token).expect(200)).body.email).toBe(mine);

    const admin = await f.loggedInUser(t, { isSuperAdmin: true }, me.tenant);
    const theirs = `admin-set-${me.user.id.slice(0, 8)}@example.com`;
    await request(t.url).put('/auth/users').set(admin.auth).send({ id: me.user.id, email: theirs }).expect(200);
    expect((await profile(me.token).expect(200)).body.email).toBe(theirs);
  });

  it('a warm caller is answered without a promise; a cold one, or one whose session ended, still goes through the checks', async () => {
    const authenticator = t.app.get(AccessAuthenticator, { strict: false });
    const me = await f.loggedInUser(t, { features: [] });
    const req = { headers: { authorization: `Bearer ${me.token}` } } as unknown as Request;
    await profile(me.token).expect(200); // session and ACL now cached
    const warm = authenticator.authenticate(req);
    expect(warm).toBeInstanceOf(AuthContext);
    expect((warm as AuthContext).userId).toBe(me.user.id);
    // Ended: the logout dropped the cached session, so the next answer is loaded, and is a refusal.
    await request(t.url).post('/auth/logout').set(me.auth).expect(302);
    await expect(authenticator.authenticate(req)).rejects.toThrow('session expired or revoked');
    await profile(me.token).expect(401);
    // Nothing cached for a fresh login: a promise, and the same context once loaded.
    const fresh = await f.loggedInUser(t, { features: [] });
    const cold = authenticator.authenticate({ headers: { authorization: `Bearer ${fresh.token}` } } as unknown as Request);
    expect(cold).toBeInstanceOf(Promise);
    expect((await cold)?.userId).toBe(fresh.user.id);
  });

  it('a deleted user’s token gets nothing, even with its profile cached', async () => {
    const admin = await f.loggedInUser(t, { isSuperAdmin: true });
    const doomed = await f.loggedInUser(t, { features: [] }, admin.tenant);
    await profile(doomed.token).expect(200);
    await request(t.url).delete(`/auth/users?id=${doomed.user.id}`).set(admin.auth).expect(200);
    await profile(doomed.token).expect(401);
  });
});
