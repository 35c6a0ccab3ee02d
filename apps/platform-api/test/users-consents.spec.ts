import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { canonicalConsent, verifyConsentIntegrity } from '../src/modules/users/consent-integrity.js';
import { Factories, testIp } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

/** CONSENT_INTEGRITY_SECRET of the test app (support/platform-test-app.ts). */
const SECRET = 'test-consent-secret';

describe('canonical form of a consent record', () => {
  const base = {
    userId: '6f1c1f4e-8a7b-4c1e-9a57-0d3b7b8a9c10',
    consentType: 'marketing',
    isGranted: true,
    grantedAt: new Date('2025-01-02T03:04:05.678Z'),
    withdrawnAt: null,
    ipAddress: '10.0.0.1',
    source: null,
  };

  it('is userId|consentType|isGranted|grantedAt|withdrawnAt|ipAddress|source with ISO dates and empty nulls', () => {
    expect(canonicalConsent(base)).toBe('6f1c1f4e-8a7b-4c1e-9a57-0d3b7b8a9c10|marketing|true|2025-01-02T03:04:05.678Z||10.0.0.1|');
  });

  it('escapes | and \\ inside values, so no two records share a canonical form by moving a boundary', () => {
    const a = canonicalConsent({ ...base, ipAddress: '10.0.0.1|web', source: 'x' });
    const b = canonicalConsent({ ...base, ipAddress: '10.0.0.1', source: 'web|x' });
    expect(a).not.toBe(b);
    expect(canonicalConsent({ ...base, source: 'a\\|b' })).toMatch(/\|a\\\\\\\|b$/);
  });

  it('verification is false for a missing, shorter or different hash', () => {
    const good = createHmac('sha256', SECRET).update(canonicalConsent(base)).digest('hex');
    expect(verifyConsentIntegrity(SECRET, base, good)).toBe(true);
    expect(verifyConsentIntegrity(SECRET, base, null)).toBe(false);
    expect(verifyConsentIntegrity(SECRET, base, good.slice(0, 10))).toBe(false);
    expect(verifyConsentIntegrity(SECRET, { ...base, isGranted: false }, good)).toBe(false);
    expect(verifyConsentIntegrity('another-secret', base, good)).toBe(false);
  });
});

describe('GET and POST /auth/users/consents', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let tenant: { id: string; organizationId: string };
  let editor: { Authorization: string };
  let subject: { id: string };

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    tenant = await f.tenant();
    editor = (await f.loggedInUser(t, { features: ['auth.users.edit'] }, tenant)).auth;
    subject = await f.user(tenant);
  });
  afterAll(async () => {
    await t.close();
  });

  const api = () => request(t.url);
  const give = (body: Record<string, unknown>, ip = testIp()) =>
    api().post('/auth/users/consents').set(editor).set('X-Forwarded-For', ip).send(body);
  const consentsOf = (userId: string) => api().get('/auth/users/consents').query({ userId }).set(editor);

  it('POST records a granted consent: 201 with the client IP, grantedAt, and an HMAC over the documented fields', async () => {
    const ip = testIp();
    const res = await give({ userId: subject.id, consentType: ' marketing_email ', isGranted: true, source: 'signup_form' }, ip).expect(
      201,
    );
    expect(res.body).toEqual({
      id: expect.any(String),
      userId: subject.id,
      consentType: 'marketing_email',
      isGranted: true,
      grantedAt: expect.any(String),
      withdrawnAt: null,
      ipAddress: ip,
      source: 'signup_form',
      integrityHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      integrityValid: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const expected = createHmac('sha256', SECRET)
      .update(`${subject.id}|marketing_email|true|${res.body.grantedAt}||${ip}|signup_form`)
      .digest('hex');
    expect(res.body.integrityHash).toBe(expected);
    const [row] = await ds.query('SELECT tenant_id, integrity_hash FROM user_consents WHERE id = $1', [res.body.id]);
    expect(row).toEqual({ tenant_id: tenant.id, integrity_hash: expected });
  });

  it('POST records a withdrawal as a new record with withdrawnAt; GET lists newest first, all valid', async () => {
    const user = await f.user(tenant);
    const granted = await give({ userId: user.id, consentType: 'newsletter', isGranted: true }).expect(201);
    const withdrawn = await give({ userId: user.id, consentType: 'newsletter', isGranted: false }).expect(201);
    expect(withdrawn.body).toMatchObject({
      isGranted: false,
      grantedAt: null,
      withdrawnAt: expect.any(String),
      source: null,
      integrityValid: true,
    });
    const list = await consentsOf(user.id).expect(200);
    expect(list.body).toEqual({ items: [withdrawn.body, granted.body] });
  });

  it('a row changed in SQL shows integrityValid: false; untouched rows stay valid', async () => {
    const user = await f.user(tenant);
    const flipped = await give({ userId: user.id, consentType: 'profiling', isGranted: false }).expect(201);
    const moved = await give({ userId: user.id, consentType: 'analytics', isGranted: true }).expect(201);
    const rehashed = await give({ userId: user.id, consentType: 'partners', isGranted: true }).expect(201);
    const untouched = await give({ userId: user.id, consentType: 'cookies', isGranted: true }).expect(201);

    await ds.query('UPDATE user_consents SET is_granted = NOT is_granted WHERE id = $1', [flipped.body.id]);
    await ds.query(`UPDATE user_consents SET granted_at = granted_at - interval '1 day' WHERE id = $1`, [moved.body.id]);
    await ds.query(`UPDATE user_consents SET integrity_hash = 'deadbeef' WHERE id = $1`, [rehashed.body.id]);

    const list = await consentsOf(user.id).expect(200);
    const validity = Object.fromEntries(list.body.items.map((c: { id: string; integrityValid: boolean }) => [c.id, c.integrityValid]));
    expect(validity).toEqual({
      [flipped.body.id]: false,
      [moved.body.id]: false,
      [rehashed.body.id]: false,
      [untouched.body.id]: true,
    });
    const flippedNow = list.body.items.find((c: { id: string }) => c.id === flipped.body.id);
    expect(flippedNow).toMatchObject({ isGranted: true, integrityHash: flipped.body.integrityHash });
  });

  it('GET: 200 {items: []} for a user without consents; 400 for a missing or malformed userId', async () => {
    const user = await f.user(tenant);
    await consentsOf(user.id).expect(200, { items: [] });
    const missing = await api().get('/auth/users/consents').set(editor).expect(400);
    expect(missing.body.error).toMatch(/^validation failed: userId/);
    await consentsOf('not-a-uuid').expect(400);
  });

  it('POST: 400 for an invalid payload', async () => {
    for (const body of [
      { consentType: 'x', isGranted: true },
      { userId: 'nope', consentType: 'x', isGranted: true },
      { userId: subject.id, isGranted: true },
      { userId: subject.id, consentType: '   ', isGranted: true },
      { userId: subject.id, consentType: 'x'.repeat(101), isGranted: true },
      { userId: subject.id, consentType: 'x' },
      { userId: subject.id, consentType: 'x', isGranted: 'yes' },
      { userId: subject.id, consentType: 'x', isGranted: true, source: 's'.repeat(101) },
    ]) {
      const res = await give(body).expect(400);
      expect(res.body.error).toMatch(/^validation failed/);
    }
    await give({ userId: subject.id, consentType: 'x'.repeat(100), isGranted: true }).expect(201);
  });

  it('tenant isolation: a user of another tenant, an unknown or a deleted user is 404 on GET and POST', async () => {
    const other = await f.tenant();
    const foreign = await f.user(other);
    await ds.query(
      `INSERT INTO user_consents (tenant_id, user_id, consent_type, is_granted, integrity_hash) VALUES ($1, $2, 'marketing', true, 'x')`,
      [other.id, foreign.id],
    );
    await consentsOf(foreign.id).expect(404, { error: 'user not found' });
    await give({ userId: foreign.id, consentType: 'marketing', isGranted: true }).expect(404, { error: 'user not found' });
    expect((await ds.query('SELECT 1 FROM user_consents WHERE user_id = $1', [foreign.id])).length).toBe(1);
    await consentsOf(randomUUID()).expect(404);
    const gone = await f.user(tenant);
    await ds.query('UPDATE users SET deleted_at = now() WHERE id = $1', [gone.id]);
    await consentsOf(gone.id).expect(404);
  });

  it('401 without a token, 403 without auth.users.edit', async () => {
    await api().get('/auth/users/consents').query({ userId: subject.id }).expect(401);
    await api().post('/auth/users/consents').send({ userId: subject.id, consentType: 'x', isGranted: true }).expect(401);
    const { auth } = await f.loggedInUser(t, { features: ['auth.users.list', 'auth.users.create'] }, tenant);
    const denied = await api().get('/auth/users/consents').query({ userId: subject.id }).set(auth).expect(403);
    expect(denied.body).toEqual({ error: expect.stringContaining('auth.users.edit') });
    await api().post('/auth/users/consents').set(auth).send({ userId: subject.id, consentType: 'x', isGranted: true }).expect(403);
  });
});
