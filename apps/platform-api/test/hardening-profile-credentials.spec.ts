import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { Factories, login, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/** Issue #11 item 2: a bare access token cannot change the account's password or email. */
describe('PUT /auth/profile needs the current password for credential changes', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let tenant: { id: string; organizationId: string };
  let roleId: string;
  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    tenant = await f.tenant();
    roleId = (await f.role(tenant.id, { features: [] })).id;
  });
  afterAll(async () => {
    await t.close();
  });

  const profile = (token: string) => request(t.url).put('/auth/profile').set('Authorization', `Bearer ${token}`);
  const loginStatus = async (email: string, password: string) =>
    (await request(t.url).post('/auth/login').set('X-Forwarded-For', testIp()).type('form').send({ email, password })).status;

  it('400 without currentPassword for a password or an email change, and nothing changes', async () => {
    const me = await f.user(tenant, { roleIds: [roleId] });
    const other = await login(t, me.email, me.password);
    const token = await login(t, me.email, me.password);
    const noPassword = await profile(token).send({ password: 'stolen-token-pass' }).expect(400);
    expect(noPassword.body).toEqual({ error: 'currentPassword is required to change the email or the password' });
    const noPasswordEmail = await profile(token).send({ email: 'thief@example.com' }).expect(400);
    expect(noPasswordEmail.body).toEqual({ error: 'currentPassword is required to change the email or the password' });
    expect(await loginStatus(me.email, me.password)).toBe(200);
    expect(await loginStatus(me.email, 'stolen-token-pass')).toBe(401);
    // The owner's other session lives on.
    expect((await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${other}`).expect(200)).body.email).toBe(me.email);
  });

  it('403 with a wrong currentPassword, and nothing changes', async () => {
    const me = await f.user(tenant, { roleIds: [roleId] });
    const other = await login(t, me.email, me.password);
    const token = await login(t, me.email, me.password);
    const wrong = await profile(token).send({ password: 'stolen-token-pass', currentPassword: 'not-my-password' }).expect(403);
    expect(wrong.body).toEqual({ error: 'current password is incorrect' });
    const wrongEmail = await profile(token).send({ email: 'thief@example.com', currentPassword: 'not-my-password' }).expect(403);
    expect(wrongEmail.body).toEqual({ error: 'current password is incorrect' });
    expect(await loginStatus(me.email, me.password)).toBe(200);
    await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${other}`).expect(200);
  });

  it('with the right currentPassword: changes both, ends the other sessions, keeps this one', async () => {
    const me = await f.user(tenant, { roleIds: [roleId] });
    const other = await login(t, me.email, me.password);
    const token = await login(t, me.email, me.password);
    const newEmail = `moved-${Date.now()}@example.com`;
    const res = await profile(token).send({ email: newEmail, password: 'a-brand-new-pass', currentPassword: me.password }).expect(200);
    expect(res.body).toEqual({ ok: true, email: newEmail });
    await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${other}`).expect(401);
    expect((await request(t.url).get('/auth/profile').set('Authorization', `Bearer ${token}`).expect(200)).body.email).toBe(newEmail);
    expect(await loginStatus(newEmail, 'a-brand-new-pass')).toBe(200);
    expect(await loginStatus(newEmail, me.password)).toBe(401);
  });

  it('an email change alone with the right currentPassword works', async () => {
    const me = await f.user(tenant, { roleIds: [roleId] });
    const token = await login(t, me.email, me.password);
    const newEmail = `renamed-${Date.now()}@example.com`;
    await profile(token).send({ email: newEmail, currentPassword: me.password }).expect(200, { ok: true, email: newEmail });
    expect(await loginStatus(newEmail, me.password)).toBe(200);
  });

  it('429 with Retry-After after 5 credential-change attempts per user in 5 minutes (a stolen token cannot guess faster than logins)', async () => {
    const me = await f.user(tenant, { roleIds: [roleId] });
    const token = await login(t, me.email, me.password);
    for (let i = 0; i < 5; i += 1)
      await profile(token)
        .send({ password: 'guessing-pass-1', currentPassword: `guess-${i}` })
        .expect(403);
    const limited = await profile(token).send({ password: 'guessing-pass-1', currentPassword: me.password }).expect(429);
    expect(limited.body).toEqual({ error: expect.any(String) });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(await loginStatus(me.email, me.password)).toBe(200);
  });

  it('changing the locale needs no password', async () => {
    const me = await f.user(tenant, { roleIds: [roleId] });
    const token = await login(t, me.email, me.password);
    await request(t.url).post('/auth/locale').set('Authorization', `Bearer ${token}`).send({ locale: 'fr' }).expect(201);
  });

  it('documents currentPassword in OpenAPI', async () => {
    const doc = (await request(t.url).get('/openapi.json').expect(200)).body;
    const ref: string = doc.paths['/auth/profile'].put.requestBody.content['application/json'].schema.$ref;
    const schema = doc.components.schemas[ref.split('/').pop()!];
    expect(schema.properties.currentPassword).toMatchObject({ type: 'string', description: expect.stringMatching(/required/i) });
  });
});
