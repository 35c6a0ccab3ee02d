import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import sharp from 'sharp';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { QueueService } from '@app/service-kit';
import { startInProcessWorker, waitFor } from '@app/service-kit/testing';
import { ImageResizer } from '../src/modules/attachments/image-resizer.js';
import { ATTACHMENTS_QUEUE, AttachmentsQueue } from '../src/modules/attachments/attachments.queue.js';
import { WorkerModule } from '../src/worker.module.js';
import { startTestStorage, type StorageDriverName, type TestStorage } from './support/attachments-storage.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;

interface PendingRow {
  storage_key: string;
  attempts: number;
  last_error: string | null;
}

/**
 * Stored bytes go when their metadata goes (issue #27 item 9): an attachment's delete and a tenant's
 * delete end with the objects and their variants removed, on local disk and S3, through a removal
 * recorded in Postgres with the delete and retried by the worker until the storage confirms it.
 */
describe.each(['local', 's3'] as StorageDriverName[])('removal of stored attachment bytes on %s storage', (driver) => {
  let storage: TestStorage;
  let t: PlatformTestApp;
  let worker: INestApplicationContext;
  let ds: DataSource;
  let f: Factories;
  let admin: Awaited<ReturnType<Factories['loggedInUser']>>;
  let png: Buffer;

  const keys = () => storage.keys(t.config.attachmentsRoot);
  const keysOf = async (...fragments: string[]) => (await keys()).filter((k) => fragments.some((fragment) => k.includes(fragment)));
  const pending = (tenantId: string) =>
    ds.query<PendingRow[]>(
      'SELECT storage_key, attempts, last_error FROM attachment_storage_deletions WHERE tenant_id = $1 ORDER BY storage_key',
      [tenantId],
    );

  const upload = async (auth: Auth, data: Buffer, name: string) => {
    const res = await request(t.url)
      .post('/attachments')
      .set(auth)
      .field('entityId', 'crm:person')
      .field('recordId', randomUUID())
      .attach('file', data, name)
      .expect(200);
    return res.body.item.id as string;
  };
  /** An image attachment with two stored variants. */
  const imageWithVariants = async (auth: Auth) => {
    const id = await upload(auth, png, 'photo.png');
    await request(t.url).get(`/attachments/image/${id}?width=8&height=8`).set(auth).expect(200);
    await request(t.url).get(`/attachments/image/${id}?width=4`).set(auth).expect(200);
    await t.app.get(ImageResizer).settled();
    return id;
  };

  beforeAll(async () => {
    storage = await startTestStorage(driver);
    t = await startPlatformApp({ env: storage.env });
    ds = t.app.get(DataSource);
    f = Factories.of(t);
    admin = await f.loggedInUser(t, { isSuperAdmin: true });
    // The worker's modules, as worker.ts builds them, with the sweep scheduled every second.
    worker = await startInProcessWorker(WorkerModule.forRoot(t.config));
    await worker.get(AttachmentsQueue).schedule({ everyMs: 1000 });
    png = await sharp({ create: { width: 16, height: 16, channels: 3, background: { r: 10, g: 120, b: 200 } } })
      .png()
      .toBuffer();
  });
  afterAll(async () => {
    await storage?.allowRemovals();
    await worker?.close();
    await t?.close();
    await storage?.close();
  });

  it('a deleted tenant’s objects and variants are removed by the worker; other tenants’ stay', async () => {
    const doomed = await f.loggedInUser(t, { features: ['attachments.view', 'attachments.manage'] });
    const image = await imageWithVariants(doomed.auth);
    const file = await upload(doomed.auth, Buffer.from('a document'), 'doc.txt');
    const kept = await imageWithVariants(admin.auth);
    const tenantPrefix = `objects/${doomed.tenant.id}/`;
    expect(await keysOf(tenantPrefix, image)).toHaveLength(4);

    await ds.query('UPDATE users SET deleted_at = now() WHERE tenant_id = $1', [doomed.tenant.id]);
    await request(t.url).delete('/directory/tenants').set(admin.auth).query({ id: doomed.tenant.id }).expect(200, { ok: true });
    expect(await ds.query('SELECT id FROM attachments WHERE id = ANY($1)', [[image, file]])).toEqual([]);

    await waitFor(async () => ((await pending(doomed.tenant.id)).length === 0 ? true : null), 20_000, 'pending removals done');
    expect(await keysOf(tenantPrefix, image, file)).toEqual([]);
    expect(await keysOf(`objects/${admin.tenant.id}/${kept}`, `resized/${kept}/`)).toHaveLength(3);
  });

  it('an attachment delete whose storage refuses is retried until the object and its variants are gone, even after its jobs are lost', async () => {
    const owner = await f.loggedInUser(t, { features: ['attachments.view', 'attachments.manage'] });
    const id = await imageWithVariants(owner.auth);
    const stored = await keysOf(id);
    expect(stored).toHaveLength(3);

    await storage.refuseRemovals(t.config.attachmentsRoot, [`objects/${owner.tenant.id}`, `resized/${id}`]);
    try {
      await request(t.url).delete('/attachments').set(owner.auth).query({ id }).expect(200, { ok: true });
      await request(t.url).get(`/attachments/file/${id}`).set(owner.auth).expect(404);
      // Tried at once by the API, then again by the worker: the failures are recorded, the bytes still there.
      const failed = await waitFor(
        async () => {
          const rows = await pending(owner.tenant.id);
          return rows.length === 2 && rows.every((r) => r.attempts >= 2) ? rows : null;
        },
        20_000,
        'two failed attempts of each removal',
      );
      expect(failed.map((r) => r.storage_key)).toEqual([`objects/${owner.tenant.id}/${id}`, `resized/${id}/`]);
      for (const row of failed) expect(row.last_error).toEqual(expect.any(String));
      if (driver === 'local') expect(await keysOf(id)).toEqual(stored);
      // Redis loses the queued retries; a worker start schedules the sweep again, which reads Postgres.
      await t.app.get(QueueService).queue(ATTACHMENTS_QUEUE).obliterate({ force: true });
      await worker.get(AttachmentsQueue).schedule({ everyMs: 1000 });
    } finally {
      await storage.allowRemovals();
    }
    await waitFor(async () => ((await pending(owner.tenant.id)).length === 0 ? true : null), 30_000, 'removals retried until done');
    expect(await keysOf(id)).toEqual([]);
  });
});
