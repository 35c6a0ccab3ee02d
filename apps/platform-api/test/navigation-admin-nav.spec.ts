import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { MODULE_DECLARATIONS } from '../src/modules/declarations.js';
import { buildAdminNavLinks, sectionPathPrefixes } from '../src/modules/navigation/admin-nav.builder.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

const section = (id: string, ...hrefs: string[]) => ({
  id,
  label: id,
  items: hrefs.map((href, i) => ({ id: `${id}${i}`, label: href, href })),
});

describe('section path prefixes', () => {
  it('is the longest common path of each section’s hrefs', () => {
    expect(sectionPathPrefixes([section('a', '/backend/settings/users', '/backend/settings/roles')])).toEqual(['/backend/settings']);
    expect(sectionPathPrefixes([section('a', '/backend/profile', '/backend/profile/sidebar')])).toEqual(['/backend/profile']);
  });

  it('a single item is its own prefix', () => {
    expect(sectionPathPrefixes([section('a', '/backend/settings/users')])).toEqual(['/backend/settings/users']);
  });

  it('falls back to the hrefs when the common path has fewer than two segments', () => {
    expect(sectionPathPrefixes([section('a', '/backend/users', '/admin/roles')])).toEqual(['/backend/users', '/admin/roles']);
    expect(sectionPathPrefixes([section('a', '/backend/users', '/backend/roles')])).toEqual(['/backend/users', '/backend/roles']);
  });

  it('drops duplicates and prefixes covered by another, ignoring query strings', () => {
    expect(
      sectionPathPrefixes([
        section('a', '/backend/settings/users', '/backend/settings/roles'),
        section('b', '/backend/settings/tenants?tab=1', '/backend/settings/organizations'),
        section('c', '/backend/settings/users/invites'),
      ]),
    ).toEqual(['/backend/settings']);
    expect(sectionPathPrefixes([])).toEqual([]);
  });

  it('merges groups and sections declared by several modules and drops the empty ones', () => {
    const nav = buildAdminNavLinks(
      [
        {
          id: 'm1',
          title: 'M1',
          features: [],
          nav: [{ group: 'G', items: [{ href: '/a/x', title: 'X', requires: [] }] }],
          settingsSections: [],
        },
        {
          id: 'm2',
          title: 'M2',
          features: [],
          nav: [
            { group: 'G', items: [{ href: '/a/y', title: 'Y', requires: [] }] },
            { group: 'Hidden', items: [{ href: '/a/z', title: 'Z', requires: ['nope'] }] },
          ],
        },
      ],
      (required) => required.length === 0,
    );
    expect(nav.groups).toEqual([
      {
        name: 'G',
        items: [
          { href: '/a/x', title: 'X' },
          { href: '/a/y', title: 'Y' },
        ],
      },
    ]);
  });
});

describe('GET /auth/admin/nav and GET /auth/features', () => {
  let t: PlatformTestApp;
  let f: Factories;
  beforeAll(async () => {
    t = await startPlatformApp();
    f = Factories.of(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('401 without a token', async () => {
    await request(t.url).get('/auth/admin/nav').expect(401, { error: 'unauthorized' });
    await request(t.url).get('/auth/features').expect(401, { error: 'unauthorized' });
  });

  it('shows only what the caller’s features allow: no Users item without auth.users.list', async () => {
    const { auth, role } = await f.loggedInUser(t, { features: ['auth.roles.list'] });
    const res = await request(t.url).get('/auth/admin/nav').set(auth).expect(200);
    expect(res.body).toEqual({
      groups: [{ name: 'Administration', items: [{ href: '/backend/roles', title: 'Roles' }] }],
      settingsSections: [
        { id: 'access', label: 'Access control', items: [{ id: 'roles', label: 'Roles', href: '/backend/settings/roles' }] },
      ],
      settingsPathPrefixes: ['/backend/settings/roles'],
      profileSections: [{ id: 'account', label: 'Account', items: [{ id: 'profile', label: 'Profile', href: '/backend/profile' }] }],
      profilePathPrefixes: ['/backend/profile'],
      grantedFeatures: ['auth.roles.list'],
      roles: [role.name],
    });
    expect(JSON.stringify(res.body)).not.toContain('/backend/users');
  });

  it('drops groups and sections left empty', async () => {
    const { auth } = await f.loggedInUser(t, { features: [] });
    const res = await request(t.url).get('/auth/admin/nav').set(auth).expect(200);
    expect(res.body.groups).toEqual([]);
    expect(res.body.settingsSections).toEqual([]);
    expect(res.body.settingsPathPrefixes).toEqual([]);
    expect(res.body.profileSections).toEqual([
      { id: 'account', label: 'Account', items: [{ id: 'profile', label: 'Profile', href: '/backend/profile' }] },
    ]);
    expect(res.body.grantedFeatures).toEqual([]);
  });

  it('honours wildcards and reports them as granted', async () => {
    const { auth } = await f.loggedInUser(t, { features: ['auth.*'] });
    const res = await request(t.url).get('/auth/admin/nav').set(auth).expect(200);
    expect(res.body.groups[0].items.map((i: { href: string }) => i.href)).toEqual(['/backend/users', '/backend/roles']);
    expect(res.body.settingsSections.map((s: { id: string }) => s.id)).toEqual(['access']);
    expect(res.body.settingsPathPrefixes).toEqual(['/backend/settings']);
    expect(res.body.profilePathPrefixes).toEqual(['/backend/profile']);
    expect(res.body.grantedFeatures).toEqual(['auth.*']);
  });

  it('a super administrator sees every declared item and is granted ["*"]', async () => {
    const { auth, role } = await f.loggedInUser(t, { isSuperAdmin: true });
    const res = await request(t.url).get('/auth/admin/nav').set(auth).expect(200);
    const declaredNav = MODULE_DECLARATIONS.flatMap((m) => (m.nav ?? []).flatMap((g) => g.items.map((i) => i.href)));
    const declaredSettings = MODULE_DECLARATIONS.flatMap((m) => (m.settingsSections ?? []).flatMap((s) => s.items.map((i) => i.href)));
    const declaredProfile = MODULE_DECLARATIONS.flatMap((m) => (m.profileSections ?? []).flatMap((s) => s.items.map((i) => i.href)));
    type Section = { items: { href: string }[] };
    expect(res.body.groups.flatMap((g: Section) => g.items.map((i) => i.href))).toEqual(declaredNav);
    expect(res.body.settingsSections.flatMap((s: Section) => s.items.map((i) => i.href))).toEqual(declaredSettings);
    expect(res.body.profileSections.flatMap((s: Section) => s.items.map((i) => i.href))).toEqual(declaredProfile);
    expect(res.body.settingsSections.map((s: { id: string }) => s.id)).toEqual(['access', 'directory']);
    expect(res.body.settingsPathPrefixes).toEqual(['/backend/settings']);
    expect(res.body.grantedFeatures).toEqual(['*']);
    expect(res.body.roles).toEqual([role.name]);
  });

  it('GET /auth/features: 403 without auth.acl.manage', async () => {
    const { auth } = await f.loggedInUser(t, { features: ['auth.roles.list', 'auth.users.list'] });
    const res = await request(t.url).get('/auth/features').set(auth).expect(403);
    expect(res.body).toEqual({ error: expect.stringContaining('auth.acl.manage') });
  });

  it('GET /auth/features: the catalogue of every declared feature and module', async () => {
    const { auth } = await f.loggedInUser(t, { features: ['auth.acl.manage'] });
    const res = await request(t.url).get('/auth/features').set(auth).expect(200);
    expect(res.body.modules).toEqual([
      { id: 'auth', title: 'Authentication and accounts' },
      { id: 'directory', title: 'Directory' },
      { id: 'audit_logs', title: 'Audit logs' },
      { id: 'notifications', title: 'Notifications' },
      { id: 'attachments', title: 'Attachments' },
      { id: 'ai_assistant', title: 'AI assistant' },
      { id: 'queues', title: 'Queues' },
    ]);
    expect(res.body.items).toContainEqual({ id: 'auth.users.list', title: 'List users', module: 'auth' });
    expect(res.body.items).toContainEqual({ id: 'auth.sidebar.manage', title: 'Customise the sidebar', module: 'auth' });
    expect(res.body.items).toContainEqual({ id: 'directory.tenants.manage', title: 'Manage tenants', module: 'directory' });
    expect(res.body.items).toHaveLength(MODULE_DECLARATIONS.reduce((n, m) => n + m.features.length, 0));
    for (const item of res.body.items) expect(Object.keys(item).sort()).toEqual(['id', 'module', 'title']);
  });
});
