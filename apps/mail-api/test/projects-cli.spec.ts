import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@app/service-kit/testing';
import { MAIL_CLI_USAGE, runMailCli } from '../src/cli/run-mail-cli.js';
import { mailDataSourceOptions } from '../src/core/database/data-source-options.js';
import { sendingRateKeys } from '../src/modules/delivery/sending-rate.js';
import { ProjectsService } from '../src/modules/projects/projects.service.js';
import { createMailTestEnv, type MailTestEnv } from './support/mail-test-app.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** Runs the CLI in-process, capturing what it prints. */
async function cli(t: MailTestEnv, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runMailCli(
    argv,
    t.config,
    (l) => out.push(l),
    (l) => err.push(l),
  );
  return { code, out, err };
}

describe('mail CLI: projects and keys', () => {
  let t: MailTestEnv;
  let ds: DataSource;
  let projects: ProjectsService;
  beforeAll(async () => {
    t = await createMailTestEnv();
    ds = await new DataSource(mailDataSourceOptions(t.config.databaseUrl)).initialize();
    projects = new ProjectsService(ds);
  });
  afterAll(async () => {
    await ds.destroy();
    await t.cleanup();
  });

  it('project:create prints one JSON line {id, name, secretKey, publicKey} and stores only hashes', async () => {
    const { code, out, err } = await cli(t, 'project:create', 'Acme Mail');
    expect({ code, err }).toEqual({ code: 0, err: [] });
    expect(out).toHaveLength(1);
    expect(out[0]).not.toContain('\n');
    const created = JSON.parse(out[0]);
    expect(Object.keys(created).sort()).toEqual(['id', 'name', 'publicKey', 'secretKey']);
    expect(created.name).toBe('Acme Mail');
    expect(created.secretKey).toMatch(/^sk_[0-9a-f]{48}$/);
    expect(created.publicKey).toMatch(/^pk_[0-9a-f]{48}$/);

    const [row] = await ds.query(`SELECT * FROM projects WHERE id = $1`, [created.id]);
    expect(row).toMatchObject({
      name: 'Acme Mail',
      secret_key_hash: sha256(created.secretKey),
      public_key_hash: sha256(created.publicKey),
      secret_key_prefix: created.secretKey.slice(0, 10),
      disabled: false,
    });
    // Neither raw key, nor its random part, appears in any column.
    const [{ text }] = await ds.query(`SELECT row_to_json(p)::text AS text FROM projects p WHERE id = $1`, [created.id]);
    for (const key of [created.secretKey, created.publicKey]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(key.slice(3));
    }
  });

  it('each project gets its own keys, and the keys find their project and kind', async () => {
    const a = JSON.parse((await cli(t, 'project:create', 'A')).out[0]);
    const b = JSON.parse((await cli(t, 'project:create', 'B')).out[0]);
    expect(new Set([a.secretKey, a.publicKey, b.secretKey, b.publicKey]).size).toBe(4);
    expect(await projects.findByKey(a.secretKey)).toMatchObject({ kind: 'secret', project: { id: a.id, name: 'A' } });
    expect(await projects.findByKey(a.publicKey)).toMatchObject({ kind: 'public', project: { id: a.id } });
    expect(await projects.findByKey(b.secretKey)).toMatchObject({ kind: 'secret', project: { id: b.id } });
    // A public key presented where a secret one is expected is not the secret key of anything, and vice versa.
    expect(await projects.findByKey(`sk_${a.publicKey.slice(3)}`)).toBeNull();
    expect(await projects.findByKey('sk_' + '0'.repeat(48))).toBeNull();
    expect(await projects.findByKey('Bearer nonsense')).toBeNull();
  });

  it('a disabled project is still found (the auth guard answers 403 for it)', async () => {
    const p = JSON.parse((await cli(t, 'project:create', 'Disabled')).out[0]);
    await ds.query(`UPDATE projects SET disabled = true WHERE id = $1`, [p.id]);
    expect(await projects.findByKey(p.secretKey)).toMatchObject({ kind: 'secret', project: { id: p.id, disabled: true } });
  });

  it('project:rotate-keys gives new keys and the old ones stop working', async () => {
    const before = JSON.parse((await cli(t, 'project:create', 'Rotating')).out[0]);
    const { code, out, err } = await cli(t, 'project:rotate-keys', before.id);
    expect({ code, err }).toEqual({ code: 0, err: [] });
    expect(out).toHaveLength(1);
    const after = JSON.parse(out[0]);
    expect(after).toEqual({ id: before.id, name: 'Rotating', secretKey: expect.any(String), publicKey: expect.any(String) });
    expect(after.secretKey).toMatch(/^sk_[0-9a-f]{48}$/);
    expect(after.publicKey).toMatch(/^pk_[0-9a-f]{48}$/);
    expect(after.secretKey).not.toBe(before.secretKey);
    expect(after.publicKey).not.toBe(before.publicKey);

    expect(await projects.findByKey(before.secretKey)).toBeNull();
    expect(await projects.findByKey(before.publicKey)).toBeNull();
    expect((await projects.findByKey(after.secretKey))?.project.id).toBe(before.id);
    expect((await projects.findByKey(after.publicKey))?.project.id).toBe(before.id);
    const [row] = await ds.query(`SELECT secret_key_prefix FROM projects WHERE id = $1`, [before.id]);
    expect(row.secret_key_prefix).toBe(after.secretKey.slice(0, 10));
  });

  it('project:rotate-keys of an unknown id fails with exit 1 and a plain error line', async () => {
    for (const id of ['5b0a3c1e-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const { code, out, err } = await cli(t, 'project:rotate-keys', id);
      expect(code).toBe(1);
      expect(out).toEqual([]);
      expect(err).toHaveLength(1);
      expect(err[0]).toMatch(/project not found/);
      expect(err[0]).toContain(id);
      expect(() => JSON.parse(err[0])).toThrow();
    }
  });

  it('project:set-rate caps a project (max_send_rate) and `none` removes the cap; an unknown id exits 1', async () => {
    const created = await projects.create('Capped');
    const capped = await cli(t, 'project:set-rate', created.id, '3');
    expect({ code: capped.code, err: capped.err }).toEqual({ code: 0, err: [] });
    expect(JSON.parse(capped.out[0])).toEqual({ id: created.id, name: 'Capped', maxSendRate: 3 });
    expect((await ds.query(`SELECT max_send_rate FROM projects WHERE id = $1`, [created.id]))[0].max_send_rate).toBe(3);
    const uncapped = await cli(t, 'project:set-rate', created.id, 'none');
    expect(JSON.parse(uncapped.out[0])).toEqual({ id: created.id, name: 'Capped', maxSendRate: null });
    expect((await ds.query(`SELECT max_send_rate FROM projects WHERE id = $1`, [created.id]))[0].max_send_rate).toBeNull();
    const unknown = await cli(t, 'project:set-rate', '5b0a3c1e-0000-4000-8000-000000000000', '3');
    expect(unknown.code).toBe(1);
    expect(unknown.err[0]).toMatch(/project not found/);
  });

  it('rate:get prints MAIL_RATE_PER_SECOND until rate:set stores a rate in Redis (the key every worker reads)', async () => {
    const before = await cli(t, 'rate:get');
    expect({ code: before.code, out: before.out.map((l) => JSON.parse(l)) }).toEqual({
      code: 0,
      out: [{ ratePerSecond: t.config.ratePerSecond, source: 'MAIL_RATE_PER_SECOND' }],
    });
    const set = await cli(t, 'rate:set', '5');
    expect({ code: set.code, out: set.out }).toEqual({ code: 0, out: [JSON.stringify({ ratePerSecond: 5 })] });
    const redis = new Redis(t.config.redisUrl);
    try {
      expect(await redis.get(sendingRateKeys(t.config.queuePrefix).rate)).toBe('5');
    } finally {
      redis.disconnect();
    }
    expect(JSON.parse((await cli(t, 'rate:get')).out[0])).toEqual({ ratePerSecond: 5, source: 'rate:set' });
  });

  it('bad usage prints the usage to stderr and exits 2', async () => {
    const cases = [
      [],
      ['project:create'],
      ['project:create', '   '],
      ['project:create', 'a', 'b'],
      ['project:delete', 'x'],
      ['rate:set'],
      ['rate:set', '0'],
      ['rate:set', '-3'],
      ['rate:set', '1.5'],
      ['rate:set', '9999999'],
      ['rate:set', '14', 'x'],
      ['rate:get', 'x'],
      ['project:set-rate', 'x'],
      ['project:set-rate', 'x', 'fast'],
      ['project:set-rate', 'x', '0'],
    ];
    for (const argv of cases) {
      const { code, out, err } = await cli(t, ...argv);
      expect({ argv, code, out, err }).toEqual({ argv, code: 2, out: [], err: [MAIL_CLI_USAGE] });
    }
  });
});

describe('mail CLI on a database without migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('mail');
  });
  afterAll(async () => {
    await db.drop();
  });

  it('says to run the migrations and exits 1', async () => {
    const t = { config: { databaseUrl: db.url } } as MailTestEnv;
    const { code, out, err } = await cli(t, 'project:create', 'Acme');
    expect(code).toBe(1);
    expect(out).toEqual([]);
    expect(err).toEqual([expect.stringMatching(/run `npm run migrate -w mail-api` first/)]);
  });
});
