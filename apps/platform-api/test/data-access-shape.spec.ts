import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { platformDataSourceOptions } from '../src/core/database/data-source-options.js';

/**
 * The data-access rules of CONTRIBUTING.md, checked on the sources (issue #12): core/ never imports
 * modules/, each table has exactly one writer (a repository), the connection registers no TypeORM
 * entities (every statement is SQL in a repository), and command responses carry their undo token.
 */
const SRC = fileURLToPath(new URL('../src', import.meta.url));

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourcesUnder(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const sources = sourcesUnder(SRC).map((path) => ({ path: relative(SRC, path), text: readFileSync(path, 'utf8') }));

/** The tables of the accounts, roles, directory and consent features, with the repository that writes each. */
const WRITERS: Record<string, string> = {
  tenants: 'modules/directory/tenants.repository.ts',
  organizations: 'modules/directory/organizations.repository.ts',
  users: 'modules/users/users.repository.ts',
  roles: 'modules/roles/roles.repository.ts',
  user_roles: 'modules/roles/roles.repository.ts',
  role_acls: 'modules/roles/role-acl.repository.ts',
  user_acls: 'modules/users/user-acl.repository.ts',
  sessions: 'modules/auth/sessions.repository.ts',
  auth_tokens: 'modules/auth/auth-tokens.repository.ts',
  user_consents: 'modules/users/user-consents.repository.ts',
  action_logs: 'core/audit/action-logs.repository.ts',
  access_logs: 'core/audit/access-logs.repository.ts',
  notifications: 'modules/notifications/notifications.repository.ts',
  notification_settings: 'modules/notifications/notification-settings.repository.ts',
  sidebar_preferences: 'modules/sidebar/sidebar.repository.ts',
  sidebar_variants: 'modules/sidebar/sidebar.repository.ts',
  attachments: 'modules/attachments/attachments.repository.ts',
  attachment_variants: 'modules/attachments/attachment-variants.repository.ts',
  attachment_storage_deletions: 'modules/attachments/attachment-storage-deletions.repository.ts',
};

/** Folders whose statements all live in repositories and go through service-kit's typed helpers: all but migrations. */
const TYPED_AREAS = ['core/', 'modules/'];

describe('data access shape (CONTRIBUTING.md "Data access")', () => {
  it('core/ imports nothing from modules/', () => {
    const upward = sources
      .filter((s) => s.path.startsWith('core/'))
      .filter((s) => /from '(\.\.\/)+modules\//.test(s.text))
      .map((s) => s.path);
    expect(upward).toEqual([]);
  });

  it('the connection registers no entities, and no entity classes are left', () => {
    expect(platformDataSourceOptions('postgres://unused/db').entities).toEqual([]);
    expect(sources.filter((s) => s.path.endsWith('.entity.ts')).map((s) => s.path)).toEqual([]);
  });

  it.each(Object.entries(WRITERS))('%s is written by one repository only', (table, writer) => {
    const writes = new RegExp(`\\b(INSERT INTO|UPDATE|DELETE FROM) ${table}\\b`);
    expect(sources.filter((s) => writes.test(s.text)).map((s) => s.path)).toEqual([writer]);
  });

  it('every controller whose service runs commands returns their X-Undo-Token (@ReturnsUndoTokens)', () => {
    // Class decorators that apply ReturnsUndoTokens() themselves (one shared decorator for a group of
    // controllers), found by their bodies: a function counts when it calls ReturnsUndoTokens() or one of these.
    const undoDecorators: string[] = [];
    const decoratorBodies = sources
      .filter((s) => s.path.endsWith('.decorators.ts'))
      .flatMap((s) => s.text.split(/^export function /m).slice(1))
      .map((body) => ({ name: /^(\w+)/.exec(body)![1], body }));
    for (let grew = true; grew;) {
      grew = false;
      for (const { name, body } of decoratorBodies) {
        if (undoDecorators.includes(name)) continue;
        if (body.includes('ReturnsUndoTokens()') || undoDecorators.some((known) => body.includes(`${known}(`))) {
          undoDecorators.push(name);
          grew = true;
        }
      }
    }
    const runsCommands = new Set(sources.filter((s) => /\bCommandBus\b/.test(s.text) && s.path.endsWith('.service.ts')).map((s) => s.path));
    const missing = sources
      .filter((s) => s.path.endsWith('.controller.ts'))
      .filter((s) =>
        [...s.text.matchAll(/from '\.\/([\w-]+\.service)\.js'/g)].some((m) => runsCommands.has(join(dirname(s.path), `${m[1]}.ts`))),
      )
      .filter((s) => !s.text.includes('@ReturnsUndoTokens()') && !undoDecorators.some((name) => s.text.includes(`@${name}(`)))
      .map((s) => s.path);
    expect(runsCommands.size).toBeGreaterThan(5);
    expect(missing).toEqual([]);
  });

  it('SQL lives in repositories, run through the typed helpers', () => {
    const inArea = sources.filter((s) => TYPED_AREAS.some((area) => s.path.startsWith(area)));
    const untyped = inArea.filter((s) => /\b(dataSource|manager|tx|db)\.query\(|preparedQuery\(/.test(s.text)).map((s) => s.path);
    const statementsOutsideRepositories = inArea
      .filter((s) => !s.path.endsWith('.repository.ts'))
      .filter((s) => /`\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM)\s|'(SELECT|INSERT INTO|UPDATE|DELETE FROM)\s/.test(s.text))
      .map((s) => s.path);
    expect({ untyped, statementsOutsideRepositories }).toEqual({ untyped: [], statementsOutsideRepositories: [] });
  });
});
