import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const EMPTY = { version: 2, groupOrder: [], groupLabels: {}, itemLabels: {}, hiddenItems: [], itemOrder: {} };
const MANAGE = ['auth.sidebar.manage'];
type Auth = { Authorization: string };
type Variant = { id: string; name: string; isActive: boolean; updatedAt: string | null };

describe('sidebar variants', () => {
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let tenant: { id: string; organizationId: string };

  const manager = async () => (await f.loggedInUser(t, { features: MANAGE }, tenant)) as { auth: Auth; user: { id: string } };
  const post = (auth: Auth, body: object) => request(t.url).post('/auth/sidebar/variants').set(auth).send(body);
  const list = async (auth: Auth): Promise<Variant[]> =>
    (await request(t.url).get('/auth/sidebar/variants').set(auth).expect(200)).body.variants;

  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    tenant = await f.tenant();
  });
  afterAll(async () => {
    await t.close();
  });

  it('GET: 401 without a token; an empty list with the caller’s locale', async () => {
    await request(t.url).get('/auth/sidebar/variants').expect(401, { error: 'unauthorized' });
    const { auth } = await f.loggedInUser(t, { features: [] }, tenant);
    await request(t.url).get('/auth/sidebar/variants').set(auth).expect(200, { locale: 'en', variants: [] });
  });

  it('POST: 403 without auth.sidebar.manage, 401 without a token', async () => {
    const { auth } = await f.loggedInUser(t, { features: ['auth.roles.list'] }, tenant);
    const res = await post(auth, { name: 'x' }).expect(403);
    expect(res.body).toEqual({ error: expect.stringContaining('auth.sidebar.manage') });
    await request(t.url).post('/auth/sidebar/variants').send({}).expect(401);
  });

  it('POST: 200 {locale, variant} with normalized settings; the list returns it', async () => {
    const { auth } = await manager();
    const res = await post(auth, { name: ' Compact ', settings: { hiddenItems: [' /a', '/a', 1], version: 9 } }).expect(200);
    expect(res.body).toEqual({
      locale: 'en',
      variant: {
        id: expect.any(String),
        name: 'Compact',
        isActive: false,
        settings: { ...EMPTY, hiddenItems: ['/a'] },
        createdAt: expect.any(String),
        updatedAt: null,
      },
    });
    expect(new Date(res.body.variant.createdAt).toISOString()).toBe(res.body.variant.createdAt);
    const body = (await request(t.url).get('/auth/sidebar/variants').set(auth).expect(200)).body;
    expect(body).toEqual({ locale: 'en', variants: [res.body.variant] });
  });

  it('blank or omitted names: My preferences, My preferences 2, ..., reusing the lowest gap', async () => {
    const { auth } = await manager();
    expect((await post(auth, {}).expect(200)).body.variant.name).toBe('My preferences');
    expect((await post(auth, { name: '   ' }).expect(200)).body.variant.name).toBe('My preferences 2');
    expect((await post(auth, { name: null }).expect(200)).body.variant.name).toBe('My preferences 3');
    expect((await post(auth, { name: '' }).expect(200)).body.variant.name).toBe('My preferences 4');
    const second = (await list(auth)).find((v) => v.name === 'My preferences 2')!;
    await ds.query('DELETE FROM sidebar_variants WHERE id = $1', [second.id]);
    expect((await post(auth, {}).expect(200)).body.variant.name).toBe('My preferences 2');
    expect((await post(auth, {}).expect(200)).body.variant.name).toBe('My preferences 5');
  });

  it('automatic names are per user: another user starts at My preferences', async () => {
    const a = await manager();
    const b = await manager();
    await post(a.auth, {}).expect(200);
    expect((await post(b.auth, {}).expect(200)).body.variant.name).toBe('My preferences');
    expect((await list(b.auth)).map((v) => v.name)).toEqual(['My preferences']);
  });

  it('two concurrent unnamed posts get distinct names', async () => {
    const { auth } = await manager();
    const results = await Promise.all([post(auth, {}), post(auth, {}), post(auth, {})]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(results.map((r) => r.body.variant.name).sort()).toEqual(['My preferences', 'My preferences 2', 'My preferences 3']);
  });

  it('activating a variant deactivates the others', async () => {
    const { auth } = await manager();
    const first = (await post(auth, { name: 'First', isActive: true }).expect(200)).body.variant;
    expect(first.isActive).toBe(true);
    const idle = (await post(auth, { name: 'Idle' }).expect(200)).body.variant;
    expect(idle.isActive).toBe(false);
    expect((await list(auth)).filter((v) => v.isActive).map((v) => v.name)).toEqual(['First']);
    await post(auth, { name: 'Second', isActive: true }).expect(200);
    const variants = await list(auth);
    expect(variants.filter((v) => v.isActive).map((v) => v.name)).toEqual(['Second']);
    expect(variants.find((v) => v.name === 'First')!.updatedAt).toEqual(expect.any(String));
    expect(variants.find((v) => v.name === 'Idle')!.updatedAt).toBeNull();
  });

  it('concurrent activations leave exactly one active variant', async () => {
    const { auth } = await manager();
    const results = await Promise.all(['A', 'B', 'C', 'D'].map((name) => post(auth, { name, isActive: true })));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect((await list(auth)).filter((v) => v.isActive)).toHaveLength(1);
  });

  it('activation only touches the caller’s variants of the same locale', async () => {
    const a = await manager();
    const b = await manager();
    await post(a.auth, { name: 'Mine', isActive: true }).expect(200);
    await ds.query('UPDATE users SET locale = $2 WHERE id = $1', [a.user.id, 'de']);
    const de = await post(a.auth, { isActive: true }).expect(200);
    expect(de.body).toMatchObject({ locale: 'de', variant: { name: 'My preferences', isActive: true } });
    expect((await list(a.auth)).map((v) => v.name)).toEqual(['My preferences']);
    await post(b.auth, { name: 'Theirs', isActive: true }).expect(200);
    await ds.query('UPDATE users SET locale = NULL WHERE id = $1', [a.user.id]);
    expect((await list(a.auth)).map((v) => [v.name, v.isActive])).toEqual([['Mine', true]]);
  });

  it('409 duplicate_name for a name the caller already uses', async () => {
    const { auth } = await manager();
    await post(auth, { name: 'Mine' }).expect(200);
    const res = await post(auth, { name: ' Mine ' }).expect(409);
    expect(res.body).toEqual({ error: 'a variant with this name already exists', code: 'duplicate_name' });
  });

  it('400 for an invalid body', async () => {
    const { auth } = await manager();
    for (const body of [{ name: 'x'.repeat(101) }, { name: 5 }, { settings: 'compact' }, { settings: [] }, { isActive: 'yes' }]) {
      const res = await post(auth, body);
      expect([res.status, body]).toEqual([400, body]);
      expect(res.body.error).toEqual(expect.stringContaining('validation failed'));
    }
    await post(auth, { name: 'x'.repeat(100) }).expect(200);
    expect(await list(auth)).toHaveLength(1);
  });
});
