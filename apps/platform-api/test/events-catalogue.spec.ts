import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { Subscription } from 'rxjs';
import { EventBus } from '../src/core/events/event-bus.service.js';
import type { PlatformEvent } from '../src/core/events/platform-event.js';
import { AuthTokensService } from '../src/modules/auth/auth-tokens.service.js';
import { PasswordResetService } from '../src/modules/auth/password-reset.service.js';
import { Factories, testIp } from './support/factories.js';
import { waitFor } from './support/mail-api-stub.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/** decisions.md "Events": the ids every deployment declares. */
const REQUIRED_IDS = [
  'auth.login.success',
  'auth.login.failed',
  'auth.logout',
  'auth.password.reset.requested',
  'auth.password.reset.completed',
  'auth.user.created',
  'auth.user.updated',
  'auth.user.deleted',
  'auth.role.created',
  'auth.role.updated',
  'auth.role.deleted',
  'attachments.attachment.created',
  'attachments.attachment.deleted',
  'notifications.notification.created',
  'ai.action.confirmed',
  'ai.action.cancelled',
  'ai.action.expired',
];

describe('events: GET /events and the events auth emits', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let auth: Record<string, string>;
  const seen: PlatformEvent[] = [];
  let subscription: Subscription;

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    auth = (await f.loggedInUser(t, { features: [] })).auth;
    subscription = t.app
      .get(EventBus)
      .stream()
      .subscribe((e) => seen.push(e));
  });
  afterAll(async () => {
    subscription.unsubscribe();
    await t.close();
  });

  const events = (query: object = {}) => request(t.url).get('/events').set(auth).query(query);
  const ids = (body: { data: { id: string }[] }) => body.data.map((e) => e.id);

  it('lists every declared event with excludeTriggerExcluded=false: {data, total}', async () => {
    const res = await events({ excludeTriggerExcluded: 'false' }).expect(200);
    expect(res.body.total).toBe(res.body.data.length);
    expect(ids(res.body)).toEqual(expect.arrayContaining(REQUIRED_IDS));
    for (const e of res.body.data) {
      expect(e).toEqual({
        id: expect.any(String),
        label: expect.any(String),
        category: expect.stringMatching(/^(crud|lifecycle|system)$/),
        module: expect.any(String),
        excludeFromTriggers: expect.any(Boolean),
        clientBroadcast: expect.any(Boolean),
      });
    }
    const created = res.body.data.find((e: { id: string }) => e.id === 'notifications.notification.created');
    expect(created).toMatchObject({ module: 'notifications', clientBroadcast: true, excludeFromTriggers: true });
  });

  it('leaves out trigger-excluded events by default', async () => {
    const all = (await events({ excludeTriggerExcluded: 'false' }).expect(200)).body;
    const byDefault = (await events().expect(200)).body;
    const excluded = all.data.filter((e: { excludeFromTriggers: boolean }) => e.excludeFromTriggers).map((e: { id: string }) => e.id);
    expect(excluded).toEqual(expect.arrayContaining(['auth.login.failed', 'notifications.notification.created']));
    expect(byDefault.total).toBe(all.total - excluded.length);
    expect(ids(byDefault)).not.toEqual(expect.arrayContaining([excluded[0]]));
    expect((await events({ excludeTriggerExcluded: 'true' }).expect(200)).body).toEqual(byDefault);
  });

  it('filters by category and module', async () => {
    const auth = (await events({ module: 'auth', excludeTriggerExcluded: 'false' }).expect(200)).body;
    expect(auth.data.every((e: { module: string }) => e.module === 'auth')).toBe(true);
    expect(ids(auth)).toEqual(expect.arrayContaining(['auth.login.success', 'auth.role.deleted']));
    const crud = (await events({ category: 'crud' }).expect(200)).body;
    expect(crud.data.every((e: { category: string }) => e.category === 'crud')).toBe(true);
    expect(ids(crud)).toEqual(expect.arrayContaining(['auth.user.created', 'attachments.attachment.deleted']));
    const both = (await events({ category: 'lifecycle', module: 'ai_assistant' }).expect(200)).body;
    expect(ids(both).sort()).toEqual(['ai.action.cancelled', 'ai.action.confirmed', 'ai.action.expired', 'ai.action.failed']);
    expect((await events({ module: 'nothing-here' }).expect(200)).body).toEqual({ data: [], total: 0 });
  });

  it('400 for invalid filters, 401 without a token', async () => {
    expect((await events({ excludeTriggerExcluded: 'maybe' }).expect(400)).body).toEqual({
      error: expect.stringContaining('excludeTriggerExcluded'),
      details: expect.any(Array),
    });
    await events({ category: 'other' }).expect(400);
    await request(t.url).get('/events').expect(401);
  });

  it('auth emits login success and failure, logout, reset requested and completed', async () => {
    const tenant = await f.tenant();
    const role = await f.role(tenant.id, { features: [] });
    const user = await f.user(tenant, { roleIds: [role.id] });
    const find = (id: string, match: (e: PlatformEvent) => boolean = () => true) =>
      waitFor(() => seen.find((e) => e.id === id && e.tenantId === tenant.id && match(e)));

    await request(t.url)
      .post('/auth/login')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ email: user.email, password: 'wrong' })
      .expect(401);
    const failed = await find('auth.login.failed');
    expect(failed).toMatchObject({ organizationId: tenant.organizationId, payload: { email: user.email, reason: 'invalid_credentials' } });
    expect(JSON.stringify(failed.payload)).not.toContain('wrong');

    const login = await request(t.url)
      .post('/auth/login')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ email: user.email, password: user.password })
      .expect(200);
    const success = await find('auth.login.success');
    expect(success).toMatchObject({ organizationId: tenant.organizationId, payload: { userId: user.id } });
    expect(success.timestamp).toEqual(expect.any(Number));

    await request(t.url).post('/auth/logout').set('Authorization', `Bearer ${login.body.token}`).expect(302);
    expect((await find('auth.logout')).payload).toMatchObject({ userId: user.id });

    // The worker's half of a reset request (run here: it emits on this app's bus).
    await t.app
      .get(PasswordResetService)
      .processResetRequest({ email: user.email, tenantId: tenant.id, requestedAt: new Date().toISOString(), ip: '10.0.0.1' });
    expect((await find('auth.password.reset.requested')).payload).toMatchObject({ userId: user.id });

    const issued = await t.app.get(AuthTokensService).issue(tenant.id, user.id, 'password_reset');
    await request(t.url)
      .post('/auth/reset/confirm')
      .set('X-Forwarded-For', testIp())
      .type('form')
      .send({ token: issued.token, password: 'another-password-1' })
      .expect(200);
    expect((await find('auth.password.reset.completed')).payload).toMatchObject({ userId: user.id, purpose: 'password_reset' });
  });
});
