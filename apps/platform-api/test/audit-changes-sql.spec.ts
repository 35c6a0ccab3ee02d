import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { diffSnapshots } from '../src/core/audit/snapshot-diff.js';
import { createPlatformTestEnv, type PlatformTestEnv } from './support/platform-test-app.js';

/**
 * The command bus derives `changes` in SQL (`audit_changes`) for commands with a snapshot query and in
 * TypeScript (`diffSnapshots`) for the others: both must give the same answer for the same snapshots.
 */
describe('audit_changes (SQL) agrees with diffSnapshots', () => {
  let env: PlatformTestEnv;
  let client: pg.Client;
  beforeAll(async () => {
    env = await createPlatformTestEnv();
    client = new pg.Client({ connectionString: env.db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await env?.cleanup();
  });

  const cases: [string, Record<string, unknown> | null, Record<string, unknown> | null][] = [
    ['a create', null, { id: 'r1', name: 'Editors', acls: [], members: [] }],
    ['a delete', { id: 'r1', name: 'Editors', acls: [{ tenantId: 't', features: ['a'] }] }, null],
    [
      'a rename',
      { id: 'r1', name: 'A', createdAt: '2026-01-01T00:00:00.000Z' },
      { id: 'r1', name: 'B', createdAt: '2026-01-01T00:00:00.000Z' },
    ],
    ['no change but updatedAt', { id: 'r1', name: 'A', updatedAt: '1' }, { id: 'r1', name: 'A', updatedAt: '2' }],
    ['nested objects with other key order are equal', { acl: { a: 1, b: [1, 2] } }, { acl: { b: [1, 2], a: 1 } }],
    ['array order matters', { features: ['a', 'b'] }, { features: ['b', 'a'] }],
    ['a missing field equals null', { note: null, x: 1 }, { x: 1 }],
    ['null to value and value to missing', { a: null, b: 'gone' }, { a: 'set' }],
    ['numbers compare by value', { n: 1 }, { n: 1.0 }],
    ['types differ', { v: '1' }, { v: 1 }],
  ];

  it.each(cases)('%s', async (_name, before, after) => {
    const { rows } = await client.query('SELECT audit_changes($1::jsonb, $2::jsonb) AS changes', [
      before === null ? null : JSON.stringify(before),
      after === null ? null : JSON.stringify(after),
    ]);
    expect(rows[0].changes).toEqual(diffSnapshots(before, after));
  });
});
