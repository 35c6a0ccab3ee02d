import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { MailConfig } from '../src/config/mail-config.js';
import { createMailHttpApp } from '../src/http-setup.js';
import { generateKeyPair } from '../src/core/auth/project-keys.js';
import { ProjectsService } from '../src/modules/projects/projects.service.js';
import { createMailTestEnv, type MailTestEnv } from './support/mail-test-app.js';

const KEYS = { secretKey: `sk_${'0123456789abcdef'.repeat(3)}`, publicKey: `pk_${'fedcba9876543210'.repeat(3)}` };
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** Boots the API (bootstrap runs in OnApplicationBootstrap), hands it to `use`, and closes it. */
async function withApp<T>(t: MailTestEnv, use: (ds: DataSource, projects: ProjectsService) => Promise<T>): Promise<T> {
  const app = await createMailHttpApp(t.config);
  try {
    // Inside the try: a failing bootstrap must still close the pools, or Jest hangs instead of failing.
    await app.init();
    return await use(app.get(DataSource), app.get(ProjectsService));
  } finally {
    await app.close();
  }
}

/**
 * Boots `count` API instances at once on one config, as replicas starting together (each runs the
 * bootstrap in OnApplicationBootstrap), hands one of them to `use`, and closes them all.
 */
async function withReplicas<T>(config: MailConfig, count: number, use: (ds: DataSource) => Promise<T>): Promise<T> {
  const created = await Promise.allSettled(Array.from({ length: count }, () => createMailHttpApp(config)));
  const apps = created.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  try {
    const started = await Promise.allSettled(apps.map((app) => app.init()));
    for (const r of [...created, ...started]) if (r.status === 'rejected') throw r.reason;
    return await use(apps[0].get(DataSource));
  } finally {
    await Promise.all(apps.map((app) => app.close()));
  }
}

async function projectRows(ds: DataSource) {
  return ds.query(`SELECT id, name, secret_key_hash, public_key_hash, secret_key_prefix, disabled FROM projects ORDER BY created_at`);
}

describe('mail bootstrap project', () => {
  let t: MailTestEnv;
  beforeAll(async () => {
    t = await createMailTestEnv({ MAIL_BOOTSTRAP_SECRET_KEY: KEYS.secretKey, MAIL_BOOTSTRAP_PUBLIC_KEY: KEYS.publicKey });
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('creates project Default with exactly the configured keys at start, stored as hashes', async () => {
    await withApp(t, async (ds, projects) => {
      const rows = await projectRows(ds);
      expect(rows).toEqual([
        {
          id: expect.any(String),
          name: 'Default',
          secret_key_hash: sha256(KEYS.secretKey),
          public_key_hash: sha256(KEYS.publicKey),
          secret_key_prefix: KEYS.secretKey.slice(0, 10),
          disabled: false,
        },
      ]);
      expect((await projects.findByKey(KEYS.secretKey))?.project.id).toBe(rows[0].id);
      expect((await projects.findByKey(KEYS.publicKey))?.kind).toBe('public');
    });
  });

  it('is idempotent across a restart, replicas starting together and concurrent calls', async () => {
    // The state after a start; then the same keys start again, on three replicas at once.
    const before = await withApp(t, (ds) => projectRows(ds));
    expect(before).toHaveLength(1);
    expect(await withReplicas(t.config, 3, (ds) => projectRows(ds))).toEqual(before);
    await withApp(t, async (ds, projects) => {
      const results = await Promise.all(Array.from({ length: 5 }, () => projects.ensureBootstrapProject(KEYS.secretKey, KEYS.publicKey)));
      expect(results).toEqual(Array.from({ length: 5 }, () => ({ created: false, projectId: before[0].id })));
      expect(await projectRows(ds)).toEqual(before);
    });
  });

  it('concurrent first starts with new keys create the project exactly once', async () => {
    const keys = generateKeyPair();
    // Four replicas starting together with keys no project has yet: each runs the bootstrap.
    const rows = await withReplicas({ ...t.config, bootstrapKeys: keys }, 4, (ds) =>
      ds.query(`SELECT name, public_key_hash FROM projects WHERE secret_key_hash = $1`, [sha256(keys.secretKey)]),
    );
    expect(rows).toEqual([{ name: 'Default', public_key_hash: sha256(keys.publicKey) }]);
    // And the same race between calls inside one instance.
    const more = generateKeyPair();
    await withApp(t, async (ds, projects) => {
      const results = await Promise.all(Array.from({ length: 4 }, () => projects.ensureBootstrapProject(more.secretKey, more.publicKey)));
      expect(results.map((r) => r.created).sort()).toEqual([false, false, false, true]);
      expect(new Set(results.map((r) => r.projectId)).size).toBe(1);
      const [{ count }] = await ds.query(`SELECT count(*)::int AS count FROM projects WHERE secret_key_hash = $1`, [
        sha256(more.secretKey),
      ]);
      expect(count).toBe(1);
    });
  });

  it('refuses a public key that already belongs to a project with another secret key', async () => {
    await withApp(t, async (ds, projects) => {
      const before = await projectRows(ds);
      const other = generateKeyPair();
      await expect(projects.ensureBootstrapProject(other.secretKey, KEYS.publicKey)).rejects.toThrow(
        /MAIL_BOOTSTRAP_PUBLIC_KEY already belongs/,
      );
      await expect(projects.ensureBootstrapProject('sk_nothex', other.publicKey)).rejects.toThrow(/48 lowercase hex/);
      expect(await projectRows(ds)).toEqual(before);
    });
  });
});

describe('mail start without bootstrap keys', () => {
  let t: MailTestEnv;
  beforeAll(async () => {
    t = await createMailTestEnv();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('creates no project', async () => {
    await withApp(t, async (ds) => {
      expect(await projectRows(ds)).toEqual([]);
    });
  });
});
