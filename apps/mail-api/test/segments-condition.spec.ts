import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  compileCondition,
  compileFilter,
  segmentAudiencePredicate,
  validateCondition,
  validateFilter,
  type CompileOptions,
  type SegmentCondition,
  type SegmentFilter,
} from '../src/modules/segments/segment-condition.js';
import { parseSegmentDate } from '../src/modules/segments/segment-fields.js';
import { createMailTestEnv, type MailTestEnv } from './support/mail-test-app.js';

/**
 * The compiled predicates against real Postgres: every operator on a small fixture whose timestamps
 * the test sets, AND/OR logic, project isolation and hostile values. No HTTP: segments-api.spec.ts
 * covers the endpoints.
 */

const DAY = 86_400_000;
const iso = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
const WEIRD_KEY = 'we"ird\\key.$[*]';

interface FixtureContact {
  email: string;
  subscribed: boolean;
  data: Record<string, unknown>;
  createdAgo: number;
  events: [string, number][];
}

const CONTACTS: FixtureContact[] = [
  {
    email: 'alice@example.com',
    subscribed: true,
    data: { plan: 'pro', age: 30, score: 9.5, vip: true, city: 'Zürich', signup: iso(5 * DAY), [WEIRD_KEY]: 1 },
    createdAgo: 10 * DAY,
    events: [
      ['purchase', 1 * DAY],
      ['email.opened', 5 * DAY],
    ],
  },
  {
    email: 'bob@Example.org',
    subscribed: false,
    data: { plan: 'free', age: 17, note: '100%_sure', signup: iso(100 * DAY).replace('Z', '+02:00'), vip: false },
    createdAgo: 40 * DAY,
    events: [['purchase', 60 * DAY]],
  },
  {
    email: 'carol@test.io',
    subscribed: true,
    data: { plan: 'Pro', age: '30', signup: 'not a date', weird: '2024-02-30', big: 1e21 },
    createdAgo: 2 * 3_600_000,
    events: [['signup', 0]],
  },
  { email: 'dave@example.com', subscribed: true, data: {}, createdAgo: 400 * DAY, events: [] },
];

describe('segment conditions compiled to SQL', () => {
  let env: MailTestEnv;
  let client: pg.Client;
  let projectId: string;

  /**
   * The emails of project A's contacts matching `compile`'s predicate, sorted; compiled both with and
   * without `projectParam`, which must not change the answer.
   */
  async function emailsMatching(compile: (params: unknown[], options: CompileOptions) => string): Promise<string[]> {
    const answers: string[][] = [];
    for (const options of [{}, { projectParam: '$1' }]) {
      const params: unknown[] = [projectId];
      const predicate = compile(params, options);
      const { rows } = await client.query<{ email: string }>(
        `SELECT c.email FROM contacts c WHERE c.project_id = $1 AND ${predicate} ORDER BY c.email`,
        params,
      );
      answers.push(rows.map((r) => r.email));
    }
    expect(answers[1]).toEqual(answers[0]);
    return answers[0];
  }
  const matching = (filter: SegmentFilter) => emailsMatching((params, options) => compileFilter(filter, 'c', params, options));

  async function insertContacts(project: string, contacts: FixtureContact[]): Promise<void> {
    for (const c of contacts) {
      const {
        rows: [{ id }],
      } = await client.query<{ id: string }>(
        `INSERT INTO contacts (project_id, email, subscribed, data, created_at) VALUES ($1, $2, $3, $4, now() - $5 * interval '1 millisecond') RETURNING id`,
        [project, c.email, c.subscribed, JSON.stringify(c.data), c.createdAgo],
      );
      for (const [name, ago] of c.events) {
        await client.query(
          `INSERT INTO events (project_id, contact_id, name, created_at) VALUES ($1, $2, $3, now() - $4 * interval '1 millisecond')`,
          [project, id, name, ago],
        );
      }
    }
  }

  beforeAll(async () => {
    env = await createMailTestEnv();
    client = new pg.Client({ connectionString: env.db.url });
    await client.connect();
    const insertProject = `INSERT INTO projects (name, secret_key_hash, public_key_hash, secret_key_prefix) VALUES ($1, $2, $3, 'sk_') RETURNING id`;
    projectId = (await client.query<{ id: string }>(insertProject, ['A', 'ha', 'pa'])).rows[0].id;
    const other = (await client.query<{ id: string }>(insertProject, ['B', 'hb', 'pb'])).rows[0].id;
    await insertContacts(projectId, CONTACTS);
    // Another project's contact matches almost everything; it must never appear.
    await insertContacts(other, [
      {
        email: 'eve@example.com',
        subscribed: false,
        data: { ...CONTACTS[0].data, plan: 'pro', note: '100%_sure' },
        createdAgo: 1000,
        events: [['purchase', 1000]],
      },
    ]);
  });
  afterAll(async () => {
    await client?.end();
    await env?.cleanup();
  });

  it('email: equals/notEquals case-insensitive; contains/notContains substring with LIKE wildcards literal', async () => {
    expect(await matching({ field: 'email', operator: 'equals', value: 'ALICE@example.COM' })).toEqual(['alice@example.com']);
    expect(await matching({ field: 'email', operator: 'notEquals', value: 'alice@example.com' })).toEqual([
      'bob@Example.org',
      'carol@test.io',
      'dave@example.com',
    ]);
    expect(await matching({ field: 'email', operator: 'contains', value: 'EXAMPLE' })).toEqual([
      'alice@example.com',
      'bob@Example.org',
      'dave@example.com',
    ]);
    expect(await matching({ field: 'email', operator: 'notContains', value: 'example' })).toEqual(['carol@test.io']);
    expect(await matching({ field: 'email', operator: 'contains', value: '%' })).toEqual([]);
    expect(await matching({ field: 'email', operator: 'contains', value: 'a_ice' })).toEqual([]);
    expect(await matching({ field: 'email', operator: 'contains', value: '\\' })).toEqual([]);
  });

  it('subscribed: equals / notEquals', async () => {
    expect(await matching({ field: 'subscribed', operator: 'equals', value: false })).toEqual(['bob@Example.org']);
    expect(await matching({ field: 'subscribed', operator: 'notEquals', value: false })).toEqual([
      'alice@example.com',
      'carol@test.io',
      'dave@example.com',
    ]);
  });

  it('createdAt: gt/gte/lt/lte against an ISO date, within/olderThan relative to now', async () => {
    const twentyDaysAgo = iso(20 * DAY);
    expect(await matching({ field: 'createdAt', operator: 'gt', value: twentyDaysAgo })).toEqual(['alice@example.com', 'carol@test.io']);
    expect(await matching({ field: 'createdAt', operator: 'gte', value: twentyDaysAgo })).toEqual(['alice@example.com', 'carol@test.io']);
    expect(await matching({ field: 'createdAt', operator: 'lt', value: twentyDaysAgo })).toEqual(['bob@Example.org', 'dave@example.com']);
    expect(await matching({ field: 'createdAt', operator: 'lte', value: twentyDaysAgo.slice(0, 10) })).toEqual([
      'bob@Example.org',
      'dave@example.com',
    ]);
    expect(await matching({ field: 'createdAt', operator: 'within', value: 30, unit: 'days' })).toEqual([
      'alice@example.com',
      'carol@test.io',
    ]);
    expect(await matching({ field: 'createdAt', operator: 'within', value: 3, unit: 'hours' })).toEqual(['carol@test.io']);
    expect(await matching({ field: 'createdAt', operator: 'within', value: 60, unit: 'minutes' })).toEqual([]);
    expect(await matching({ field: 'createdAt', operator: 'within', value: 0.0000001, unit: 'days' })).toEqual([]);
    expect(await matching({ field: 'createdAt', operator: 'within', value: 1_000_000, unit: 'days' })).toHaveLength(4);
    expect(await matching({ field: 'createdAt', operator: 'olderThan', value: 30, unit: 'days' })).toEqual([
      'bob@Example.org',
      'dave@example.com',
    ]);
  });

  it('data equals / notEquals: exact strings, numbers numerically (not numeric strings), booleans; negation includes missing keys', async () => {
    expect(await matching({ field: 'data.plan', operator: 'equals', value: 'pro' })).toEqual(['alice@example.com']);
    expect(await matching({ field: 'data.plan', operator: 'notEquals', value: 'pro' })).toEqual([
      'bob@Example.org',
      'carol@test.io',
      'dave@example.com',
    ]);
    expect(await matching({ field: 'data.age', operator: 'equals', value: 30 })).toEqual(['alice@example.com']);
    expect(await matching({ field: 'data.score', operator: 'equals', value: 9.5 })).toEqual(['alice@example.com']);
    expect(await matching({ field: 'data.age', operator: 'equals', value: '30' })).toEqual(['carol@test.io']);
    expect(await matching({ field: 'data.vip', operator: 'equals', value: false })).toEqual(['bob@Example.org']);
    expect(await matching({ field: 'data.big', operator: 'equals', value: 1e21 })).toEqual(['carol@test.io']);
  });

  it('data contains / notContains: case-insensitive, wildcards literal', async () => {
    expect(await matching({ field: 'data.plan', operator: 'contains', value: 'PR' })).toEqual(['alice@example.com', 'carol@test.io']);
    expect(await matching({ field: 'data.plan', operator: 'notContains', value: 'pr' })).toEqual(['bob@Example.org', 'dave@example.com']);
    expect(await matching({ field: 'data.note', operator: 'contains', value: '0%_s' })).toEqual(['bob@Example.org']);
    expect(await matching({ field: 'data.note', operator: 'contains', value: '100%%' })).toEqual([]);
    expect(await matching({ field: 'data.note', operator: 'contains', value: '1_0' })).toEqual([]);
    expect(await matching({ field: 'data.city', operator: 'contains', value: 'zü' })).toEqual(['alice@example.com']);
  });

  it('data gt/gte/lt/lte: numbers numerically (numeric strings and other types ignored), dates as instants, text as text', async () => {
    expect(await matching({ field: 'data.age', operator: 'gt', value: 18 })).toEqual(['alice@example.com']);
    expect(await matching({ field: 'data.age', operator: 'gte', value: 30 })).toEqual(['alice@example.com']);
    expect(await matching({ field: 'data.age', operator: 'lt', value: 18 })).toEqual(['bob@Example.org']);
    expect(await matching({ field: 'data.age', operator: 'lte', value: 17 })).toEqual(['bob@Example.org']);
    expect(await matching({ field: 'data.age', operator: 'lt', value: 9 })).toEqual([]);
    // 9.5 < 10 numerically although "9.5" > "10" as text.
    expect(await matching({ field: 'data.score', operator: 'lt', value: 10 })).toEqual(['alice@example.com']);
    // Dates: "not a date" and the impossible 2024-02-30 are no dates (and no errors).
    expect(await matching({ field: 'data.signup', operator: 'gt', value: iso(30 * DAY) })).toEqual(['alice@example.com']);
    expect(await matching({ field: 'data.signup', operator: 'lte', value: iso(30 * DAY).slice(0, 10) })).toEqual(['bob@Example.org']);
    expect(await matching({ field: 'data.weird', operator: 'gt', value: '2000-01-01' })).toEqual([]);
    expect(await matching({ field: 'data.city', operator: 'gt', value: 'A' })).toEqual(['alice@example.com']);
    expect(await matching({ field: 'data.note', operator: 'gte', value: '100' })).toEqual(['bob@Example.org']);
  });

  it('data exists / notExists, within / olderThan on date values', async () => {
    expect(await matching({ field: 'data.vip', operator: 'exists' })).toEqual(['alice@example.com', 'bob@Example.org']);
    expect(await matching({ field: 'data.vip', operator: 'notExists', value: null })).toEqual(['carol@test.io', 'dave@example.com']);
    expect(await matching({ field: `data.${WEIRD_KEY}`, operator: 'exists' })).toEqual(['alice@example.com']);
    expect(await matching({ field: `data.${WEIRD_KEY}`, operator: 'equals', value: 1 })).toEqual(['alice@example.com']);
    expect(await matching({ field: 'data.signup', operator: 'within', value: 30, unit: 'days' })).toEqual(['alice@example.com']);
    expect(await matching({ field: 'data.signup', operator: 'olderThan', value: 30, unit: 'days' })).toEqual(['bob@Example.org']);
    expect(await matching({ field: 'data.signup', operator: 'olderThan', value: 200, unit: 'days' })).toEqual([]);
  });

  it('reads stored date values like filter values: ISO 8601, UTC without offset, impossible dates are no dates', async () => {
    const samples = [
      '2024-02-29',
      '2023-02-29',
      '2024-13-01',
      '0000-01-01',
      '2024-04-31',
      '2024-01-01T24:00',
      '2024-01-01T10:00:60',
      '2024-01-01T10:00:00+16:00',
      '2024-01-01T10:00',
      '2024-01-01 10:00:00.5',
      '2024-01-01T10:00:00Z',
      '2024-01-01T10:00:00-0530',
      '2024-01-01T10:00:00+02',
      'today',
      '2024-01-01x',
    ];
    // The session time zone must not matter.
    await client.query(`SET TimeZone = 'America/New_York'`);
    try {
      const { rows } = await client.query<{ value: string; at: Date | null }>(
        `SELECT s.value, segment_text_to_timestamptz(s.value) AS at FROM unnest($1::text[]) WITH ORDINALITY AS s(value, i) ORDER BY s.i`,
        [samples],
      );
      const sqlReading = rows.map((r) => [r.value, r.at?.toISOString() ?? null]);
      const jsReading = samples.map((v) => [v, parseSegmentDate(v)]);
      expect(sqlReading).toEqual(jsReading);
      expect(Object.fromEntries(sqlReading)).toMatchObject({
        '2024-02-29': '2024-02-29T00:00:00.000Z',
        '2023-02-29': null,
        '2024-01-01T10:00': '2024-01-01T10:00:00.000Z',
        '2024-01-01T10:00:00-0530': '2024-01-01T15:30:00.000Z',
      });
    } finally {
      await client.query('RESET TimeZone');
    }
  });

  it('date predicates run inside parallel workers too (the date reader is parallel safe)', async () => {
    await client.query(`SET force_parallel_mode = on`);
    try {
      expect(await matching({ field: 'data.signup', operator: 'within', value: 30, unit: 'days' })).toEqual(['alice@example.com']);
      expect(await matching({ field: 'data.weird', operator: 'gt', value: '2000-01-01' })).toEqual([]);
    } finally {
      await client.query('RESET force_parallel_mode');
    }
  });

  it('event: triggered / notTriggered / triggeredWithin, including the system email.* names', async () => {
    expect(await matching({ field: 'event.purchase', operator: 'triggered' })).toEqual(['alice@example.com', 'bob@Example.org']);
    expect(await matching({ field: 'event.purchase', operator: 'notTriggered' })).toEqual(['carol@test.io', 'dave@example.com']);
    expect(await matching({ field: 'event.purchase', operator: 'triggeredWithin', value: 7, unit: 'days' })).toEqual(['alice@example.com']);
    expect(await matching({ field: 'event.purchase', operator: 'triggeredWithin', value: 12, unit: 'hours' })).toEqual([]);
    expect(await matching({ field: 'event.email.opened', operator: 'triggeredWithin', value: 30, unit: 'days' })).toEqual([
      'alice@example.com',
    ]);
    expect(await matching({ field: 'event.signup', operator: 'triggeredWithin', value: 5, unit: 'minutes' })).toEqual(['carol@test.io']);
  });

  it('filters of a group are ANDed; groups are joined by logic', async () => {
    const pro = { field: 'data.plan', operator: 'contains', value: 'pro' } as const;
    const unsubscribed = { field: 'subscribed', operator: 'equals', value: false } as const;
    const recent = { field: 'createdAt', operator: 'within', value: 1, unit: 'days' } as const;
    const run = (condition: SegmentCondition) => emailsMatching((params, options) => compileCondition(condition, 'c', params, options));
    expect(await run({ logic: 'OR', groups: [{ filters: [pro] }, { filters: [unsubscribed] }] })).toEqual([
      'alice@example.com',
      'bob@Example.org',
      'carol@test.io',
    ]);
    expect(await run({ logic: 'AND', groups: [{ filters: [pro] }, { filters: [unsubscribed] }] })).toEqual([]);
    expect(await run({ logic: 'OR', groups: [{ filters: [pro, recent] }, { filters: [unsubscribed] }] })).toEqual([
      'bob@Example.org',
      'carol@test.io',
    ]);
    const notClicked = { field: 'event.email.opened', operator: 'notTriggered' } as const;
    expect(
      await run({ logic: 'OR', groups: [{ filters: [{ field: 'event.signup', operator: 'triggered' }] }, { filters: [unsubscribed] }] }),
    ).toEqual(['bob@Example.org', 'carol@test.io']);
    expect(await run({ logic: 'OR', groups: [{ filters: [notClicked, pro] }, { filters: [recent] }] })).toEqual(['carol@test.io']);
    expect(await run({ logic: 'AND', groups: [{ filters: [pro, { field: 'event.purchase', operator: 'triggered' }] }] })).toEqual([
      'alice@example.com',
    ]);
  });

  it('numbers its placeholders after the parameters already there and never puts values into the SQL text', () => {
    const params: unknown[] = ['p1', 'p2'];
    const sql = compileCondition(
      {
        logic: 'AND',
        groups: [
          {
            filters: [
              { field: "data.x'); DROP TABLE contacts; --", operator: 'equals', value: "'; DROP TABLE contacts; --" },
              { field: 'event.a"b', operator: 'triggeredWithin', value: 2, unit: 'hours' },
            ],
          },
        ],
      },
      'ct',
      params,
    );
    expect(sql).not.toMatch(/DROP|a"b|\$1\b|\$2\b/);
    expect(sql).toMatch(/\$3/);
    expect(params.slice(0, 2)).toEqual(['p1', 'p2']);
    expect(params.length).toBeGreaterThan(3);
    expect(sql).toContain('ct.data @> $3::jsonb');
  });

  it('hostile strings in values, data keys and event names are inert', async () => {
    const hostile = ["' OR 1=1 --", "x'); DROP TABLE contacts; --", '$1', '"; SELECT pg_sleep(10); --', '\\', '*/ OR true /*'];
    for (const h of hostile) {
      expect(await matching({ field: 'email', operator: 'equals', value: h })).toEqual([]);
      expect(await matching({ field: `data.${h}`, operator: 'exists' })).toEqual([]);
      expect(await matching({ field: `data.${h}`, operator: 'contains', value: h })).toEqual([]);
      expect(await matching({ field: `data.${h}`, operator: 'gt', value: 1 })).toEqual([]);
      expect(await matching({ field: `event.${h}`, operator: 'triggered' })).toEqual([]);
    }
    const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM contacts`);
    expect(rows[0].n).toBe(5);
  });

  it('a STATIC segment is its member rows; a DYNAMIC one its condition', async () => {
    const { rows } = await client.query<{ id: string }>(`SELECT id FROM contacts WHERE project_id = $1 AND email = 'dave@example.com'`, [
      projectId,
    ]);
    const {
      rows: [segment],
    } = await client.query<{ id: string }>(`INSERT INTO segments (project_id, name, type) VALUES ($1, 'S', 'STATIC') RETURNING id`, [
      projectId,
    ]);
    await client.query(`INSERT INTO segment_members (project_id, segment_id, contact_id) VALUES ($1, $2, $3)`, [
      projectId,
      segment.id,
      rows[0].id,
    ]);
    expect(
      await emailsMatching((params, options) =>
        segmentAudiencePredicate({ id: segment.id, type: 'STATIC', condition: null }, 'c', params, options),
      ),
    ).toEqual(['dave@example.com']);
    const condition: SegmentCondition = {
      logic: 'AND',
      groups: [{ filters: [{ field: 'subscribed', operator: 'equals', value: false }] }],
    };
    expect(
      await emailsMatching((params, options) =>
        segmentAudiencePredicate({ id: segment.id, type: 'DYNAMIC', condition }, 'c', params, options),
      ),
    ).toEqual(['bob@Example.org']);
  });

  it('refuses to compile what validation refuses, and aliases that are not plain identifiers', () => {
    expect(() => compileFilter({ field: 'email', operator: 'gt', value: 'a' }, 'c', [])).toThrow(/invalid segment filter/);
    expect(() => compileFilter({ field: 'email', operator: 'equals', value: 'a' }, 'c; DROP', [])).toThrow(/alias/);
    expect(() => compileFilter({ field: 'email', operator: 'equals', value: 'a' }, 'segment_event', [])).toThrow(/alias/);
    const event: SegmentFilter = { field: 'event.x', operator: 'triggered' };
    expect(() => compileFilter(event, 'c', ['p'], { projectParam: '$2' })).toThrow(/projectParam/);
    expect(() => compileFilter(event, 'c', ['p'], { projectParam: '$1; DROP' })).toThrow(/projectParam/);
    expect(compileFilter(event, 'c', ['p'], { projectParam: '$1' })).toContain('segment_event.project_id = $1::uuid');
  });
});

describe('segment condition validation', () => {
  const codes = (errors: { field: string; code: string }[]) => errors.map((e) => `${e.field}:${e.code}`);

  it('accepts every field/operator pairing that makes sense', () => {
    const ok: SegmentFilter[] = [
      { field: 'email', operator: 'equals', value: 'a@b.c' },
      { field: 'email', operator: 'notContains', value: 'x' },
      { field: 'subscribed', operator: 'notEquals', value: true },
      { field: 'createdAt', operator: 'gte', value: '2025-01-01T00:00:00+02:00' },
      { field: 'createdAt', operator: 'olderThan', value: 1.5, unit: 'hours' },
      { field: 'data.plan', operator: 'equals', value: true },
      { field: 'data.n', operator: 'lte', value: -3 },
      { field: 'data.d', operator: 'within', value: 7, unit: 'days' },
      { field: 'data.d', operator: 'exists' },
      { field: 'event.email.clicked', operator: 'notTriggered' },
      { field: 'event.x', operator: 'triggeredWithin', value: 10, unit: 'minutes' },
    ];
    for (const filter of ok) expect(validateFilter(filter, 'f')).toEqual([]);
  });

  it('names the path and the rule of every problem', () => {
    const errors = validateCondition(
      {
        logic: 'XOR',
        extra: 1,
        groups: [
          {
            filters: [
              { field: 'phone', operator: 'equals', value: 'x' },
              { field: 'email', operator: 'like', value: 'x' },
              { field: 'email', operator: 'gt', value: 'x' },
              { field: 'subscribed', operator: 'equals', value: 'yes' },
              { field: 'event.x', operator: 'triggeredWithin', value: 0 },
              { field: 'data.a', operator: 'exists', value: 1, unit: 'days', other: true },
              { field: 'createdAt', operator: 'lt', value: '2025-02-30' },
              { field: 'data.', operator: 'exists' },
              { field: 'data.a', operator: 'contains', value: 'x'.repeat(1001) },
              { field: 'createdAt', operator: 'gt', value: '9999-12-31T23:00:00-02:00' },
            ],
          },
        ],
      },
      'condition',
    );
    const f = (i: number, key: string) => `condition.groups[0].filters[${i}].${key}`;
    expect(codes(errors)).toEqual([
      'condition.extra:whitelistValidation',
      'condition.logic:isIn',
      `${f(0, 'field')}:isSegmentField`,
      `${f(1, 'operator')}:isSegmentOperator`,
      `${f(2, 'operator')}:operatorNotAllowedForField`,
      `${f(3, 'value')}:isSegmentValue`,
      `${f(4, 'value')}:isSegmentValue`,
      `${f(4, 'unit')}:isSegmentUnit`,
      `${f(5, 'other')}:whitelistValidation`,
      `${f(5, 'value')}:isSegmentValue`,
      `${f(5, 'unit')}:unitNotAllowed`,
      `${f(6, 'value')}:isSegmentValue`,
      `${f(7, 'field')}:isSegmentField`,
      `${f(8, 'value')}:isSegmentValue`,
      `${f(9, 'value')}:isSegmentValue`,
    ]);
  });

  it('bounds the size: 20 groups of 20 filters, and a bounded number of errors', () => {
    const filter = { field: 'email', operator: 'contains', value: 'x' };
    const group = { filters: Array.from({ length: 20 }, () => filter) };
    expect(validateCondition({ logic: 'OR', groups: Array.from({ length: 20 }, () => group) }, 'c')).toEqual([]);
    expect(codes(validateCondition({ logic: 'OR', groups: Array.from({ length: 21 }, () => group) }, 'c'))).toEqual([
      'c.groups:arrayMaxSize',
    ]);
    expect(codes(validateCondition({ logic: 'OR', groups: [{ filters: [...group.filters, filter] }] }, 'c'))).toEqual([
      'c.groups[0].filters:arrayMaxSize',
    ]);
    const bad = { filters: Array.from({ length: 20 }, () => ({ field: 'nope', operator: 'nope' })) };
    expect(validateCondition({ logic: 'OR', groups: Array.from({ length: 20 }, () => bad) }, 'c').length).toBeLessThanOrEqual(20);
    expect(codes(validateCondition({ logic: 'AND', groups: [] }, 'c'))).toEqual(['c.groups:arrayMinSize']);
    expect(codes(validateCondition({ logic: 'AND', groups: [{ filters: [] }] }, 'c'))).toEqual(['c.groups[0].filters:arrayMinSize']);
    expect(codes(validateCondition('AND', 'condition'))).toEqual(['condition:isObject']);
    expect(codes(validateFilter(null, 'config'))).toEqual(['config:isObject']);
  });
});
