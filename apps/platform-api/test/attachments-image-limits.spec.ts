import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import sharp from 'sharp';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { ImageResizer } from '../src/modules/attachments/image-resizer.js';
import { ATTACHMENT_STORAGE, type AttachmentStorage, variantKey } from '../src/modules/attachments/storage/attachment-storage.js';
import { startTestStorage, type StorageDriverName, type TestStorage } from './support/attachments-storage.js';
import { Factories, testIp } from './support/factories.js';
import { startPlatformApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;

function binary(res: request.Response, done: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } })
    .png()
    .toBuffer();

async function dims(data: Buffer): Promise<{ width: number; height: number }> {
  const m = await sharp(data).metadata();
  return { width: m.width, height: m.height };
}

/** Shared by both suites: an app, a manager of attachments, and readers of what is stored. */
async function startImageApp(storage: TestStorage) {
  const t = await startPlatformApp({ env: storage.env });
  const owner = await Factories.of(t).loggedInUser(t, { features: ['attachments.view', 'attachments.manage'] });
  const ds = t.app.get(DataSource);
  const upload = async (data: Buffer, partitionCode = 'privateAttachments') => {
    const res = await request(t.url)
      .post('/attachments')
      .set(owner.auth)
      .field('entityId', 'crm:person')
      .field('recordId', randomUUID())
      .field('partitionCode', partitionCode)
      .attach('file', data, 'image.png')
      .expect(200);
    return res.body.item.id as string;
  };
  const image = (path: string, headers: Auth = owner.auth) => request(t.url).get(path).set(headers).buffer(true).parse(binary);
  /** The variants in storage (files) and listed in Postgres, once every render so far has been stored. */
  const variants = async (id: string) => {
    await t.app.get(ImageResizer).settled();
    const prefix = `resized/${id}/`;
    const stored = (await storage.keys(t.config.attachmentsRoot)).filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
    const listed = (await ds.query('SELECT variant FROM attachment_variants WHERE attachment_id = $1', [id])).map(
      (r: { variant: string }) => r.variant,
    );
    return { stored: stored.sort(), listed: listed.sort() };
  };
  /** Every render so far stored and listed: the order of use is the order of the requests. */
  const settled = () => t.app.get(ImageResizer).settled();
  return { t, owner, upload, image, variants, settled };
}

describe.each(['local', 's3'] as StorageDriverName[])('image variants are bounded on %s storage', (driver) => {
  let storage: TestStorage;
  let app: Awaited<ReturnType<typeof startImageApp>>;
  let renders: jest.Spied<ImageResizer['resize']>;
  let source: Buffer;

  beforeAll(async () => {
    storage = await startTestStorage(driver);
    app = await startImageApp(storage);
    renders = jest.spyOn(app.t.app.get(ImageResizer), 'resize');
    source = await png(10, 10);
  });
  afterAll(async () => {
    await app?.t.close();
    await storage?.close();
  });

  it('never upscales: sizes past a 10x10 PNG are clamped to it and share one stored variant', async () => {
    const id = await app.upload(source);
    const before = renders.mock.calls.length;
    for (let height = 3000; height < 3100; height++) {
      const res = await app.image(`/attachments/image/${id}?height=${height}`).expect(200);
      expect(await dims(res.body as Buffer)).toEqual({ width: 10, height: 10 });
    }
    for (let height = 3000; height < 3020; height++) {
      // cover: exactly the clamped width x height; contain: inside them.
      const cover = await app.image(`/attachments/image/${id}?width=4&height=${height}&cropType=cover`).expect(200);
      expect(await dims(cover.body as Buffer)).toEqual({ width: 4, height: 10 });
      const contain = await app.image(`/attachments/image/${id}?width=4&height=${height}&cropType=contain`).expect(200);
      expect(await dims(contain.body as Buffer)).toEqual({ width: 4, height: 4 });
    }
    const big = await app.image(`/attachments/image/${id}?width=4000&height=4000&cropType=contain`).expect(200);
    expect(await dims(big.body as Buffer)).toEqual({ width: 10, height: 10 });
    expect(renders.mock.calls.length - before).toBe(4);
    expect(await app.variants(id)).toEqual({
      stored: ['0x10-cover', '10x10-contain', '4x10-contain', '4x10-cover'],
      listed: ['0x10-cover', '10x10-contain', '4x10-contain', '4x10-cover'],
    });
    // Clamped requests share the ETag of their variant.
    const a = await app.image(`/attachments/image/${id}?height=3000`).expect(200);
    const b = await app.image(`/attachments/image/${id}?height=10&cropType=contain`).expect(200);
    expect(a.headers.etag).toBe(b.headers.etag);
  });

  it('an empty stored variant (a write in progress on a store without atomic PUTs) is rendered again, never answered empty', async () => {
    const id = await app.upload(source);
    const url = `/attachments/image/${id}?width=4&height=10&cropType=contain`;
    expect(await dims((await app.image(url).expect(200)).body as Buffer)).toEqual({ width: 4, height: 4 });
    // The first answer comes before its variant is written: wait until it is stored.
    for (let i = 0; !(await app.variants(id)).stored.includes('4x10-contain'); i++) {
      if (i > 200) throw new Error('the variant was never stored');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await app.t.app.get<AttachmentStorage>(ATTACHMENT_STORAGE).writeBuffer(variantKey(id, '4x10-contain'), Buffer.alloc(0));
    const again = await app.image(url).expect(200);
    expect(await dims(again.body as Buffer)).toEqual({ width: 4, height: 4 });
  });

  it('keeps at most 25 variants per attachment: 100 distinct sizes leave 25 in storage, the 25 most recent', async () => {
    const id = await app.upload(source);
    const requested: string[] = [];
    for (let height = 1; height <= 10; height++) {
      for (let width = 1; width <= 10; width++) {
        const res = await app.image(`/attachments/image/${id}?width=${width}&height=${height}`).expect(200);
        expect(await dims(res.body as Buffer)).toEqual({ width, height });
        requested.push(`${width}x${height}-cover`);
        await app.settled();
      }
    }
    const { stored, listed } = await app.variants(id);
    expect(stored).toEqual(listed);
    expect(stored).toEqual(requested.slice(-25).sort());
  });

  it('evicts the least recently used: a variant served again survives, the oldest unused one goes', async () => {
    const id = await app.upload(source);
    const url = (w: number, h: number) => `/attachments/image/${id}?width=${w}&height=${h}&cropType=contain`;
    const names: string[] = [];
    for (let n = 0; n < 25; n++) {
      const [w, h] = [(n % 5) + 1, Math.floor(n / 5) + 1];
      await app.image(url(w, h)).expect(200);
      names.push(`${w}x${h}-contain`);
      await app.settled();
    }
    expect((await app.variants(id)).stored).toEqual([...names].sort());
    const before = renders.mock.calls.length;
    // The first variant is used again (served from storage, no render)...
    await app.image(url(1, 1)).expect(200);
    expect(renders.mock.calls.length).toBe(before);
    // ...so a 26th evicts the second one, the least recently used.
    await app.image(url(9, 9)).expect(200);
    const { stored, listed } = await app.variants(id);
    expect(stored).toEqual(listed);
    expect(stored).toHaveLength(25);
    expect(stored).toContain('1x1-contain');
    expect(stored).toContain('9x9-contain');
    expect(stored).not.toContain('2x1-contain');
  });

  it('concurrent renders of one attachment keep the list and the storage equal, 25 variants', async () => {
    const id = await app.upload(source);
    const sizes = Array.from({ length: 40 }, (_, n) => [(n % 10) + 1, Math.floor(n / 10) + 1]);
    await Promise.all(sizes.map(([w, h]) => app.image(`/attachments/image/${id}?width=${w}&height=${h}`).expect(200)));
    const { stored, listed } = await app.variants(id);
    expect(stored).toHaveLength(25);
    expect(stored).toEqual(listed);
  });
});

describe('image renders without a session are rate-limited per client address', () => {
  let storage: TestStorage;
  let app: Awaited<ReturnType<typeof startImageApp>>;

  beforeAll(async () => {
    storage = await startTestStorage('local');
    app = await startImageApp(storage);
  });
  afterAll(async () => {
    await app?.t.close();
    await storage?.close();
  });

  it('the 61st anonymous render in a minute is 429 with Retry-After; stored variants and signed-in callers are not limited', async () => {
    const id = await app.upload(await png(100, 100), 'publicMedia');
    const client = testIp();
    const anonymous = { 'X-Forwarded-For': client };
    const url = (width: number) => `/attachments/image/${id}?width=${width}`;
    for (let width = 1; width <= 60; width++) await app.image(url(width), anonymous).expect(200);

    const refused = await request(app.t.url).get(url(61)).set(anonymous).expect(429);
    expect(refused.body).toEqual({ error: 'too many image renders, try again later' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);

    // A variant already stored is served to the same address: only renders count.
    await app.settled();
    await app.image(url(60), anonymous).expect(200);
    // A signed-in caller from the same address renders; another address is counted on its own.
    await app.image(url(61), { ...app.owner.auth, 'X-Forwarded-For': client }).expect(200);
    await app.image(url(62), { 'X-Forwarded-For': testIp() }).expect(200);
    await request(app.t.url).get(url(63)).set(anonymous).expect(429);
  });
});
