import { randomUUID } from 'node:crypto';
import { deflateSync, crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import sharp, { type Sharp } from 'sharp';
import request from 'supertest';
import { waitFor } from '@app/service-kit/testing';
import { ImageResizer } from '../src/modules/attachments/image-resizer.js';
import { startTestStorage, type StorageDriverName, type TestStorage } from './support/attachments-storage.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;

function binary(res: request.Response, done: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

/** A gradient, so resized outputs differ by content and not only by size. */
function gradient(width: number, height: number): Sharp {
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) pixels.set([(x * 255) / width, (y * 255) / height, 128], (y * width + x) * 3);
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } });
}

/**
 * A PNG whose header claims 10,000 x 10,000 pixels (100 megapixels: over our limit, under sharp's own
 * default) in a few dozen bytes: what a decompression bomb looks like to a decoder before it allocates.
 */
function pixelBombPng(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(10_000, 0);
  ihdr.writeUInt32BE(10_000, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.alloc(1024))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe.each(['local', 's3'] as StorageDriverName[])('attachment images on %s storage', (driver) => {
  let storage: TestStorage;
  let t: PlatformTestApp;
  let owner: Awaited<ReturnType<Factories['loggedInUser']>>;
  let stranger: Auth;
  let renders: jest.Spied<ImageResizer['resize']>;
  let jpeg: Buffer;

  const uploadImage = async (data: Buffer, name: string, partitionCode = 'privateAttachments') => {
    const res = await request(t.url)
      .post('/attachments')
      .set(owner.auth)
      .field('entityId', 'crm:person')
      .field('recordId', randomUUID())
      .field('partitionCode', partitionCode)
      .attach('file', data, name)
      .expect(200);
    return res.body.item.id as string;
  };
  const image = (path: string, auth: Auth = owner.auth) => request(t.url).get(path).set(auth).buffer(true).parse(binary);
  const refused = (path: string, auth: Auth = owner.auth) => request(t.url).get(path).set(auth);
  const dims = async (data: Buffer) => {
    const m = await sharp(data).metadata();
    return { width: m.width, height: m.height, format: m.format };
  };

  beforeAll(async () => {
    storage = await startTestStorage(driver);
    t = await startPlatformApp({ env: storage.env });
    const f = Factories.of(t);
    owner = await f.loggedInUser(t, { features: ['attachments.view', 'attachments.manage'] });
    stranger = (await f.loggedInUser(t, { features: ['attachments.view', 'attachments.manage'] })).auth;
    renders = jest.spyOn(t.app.get(ImageResizer), 'resize');
    jpeg = await gradient(1200, 900).jpeg().toBuffer();
  });
  afterAll(async () => {
    await t?.close();
    await storage?.close();
  });

  it('cover gives exactly width x height, contain fits inside keeping the aspect ratio, in the source format', async () => {
    const id = await uploadImage(jpeg, 'photo.jpg');
    let res = await image(`/attachments/image/${id}/photo.jpg?width=300&height=200&cropType=cover`).expect(200);
    expect(res.headers['content-type']).toBe('image/jpeg');
    expect(await dims(res.body as Buffer)).toEqual({ width: 300, height: 200, format: 'jpeg' });
    res = await image(`/attachments/image/${id}?width=300&height=300&cropType=contain`).expect(200);
    expect(await dims(res.body as Buffer)).toEqual({ width: 300, height: 225, format: 'jpeg' });
    res = await image(`/attachments/image/${id}?width=120`).expect(200);
    expect(await dims(res.body as Buffer)).toEqual({ width: 120, height: 90, format: 'jpeg' });
    // No size: the original bytes.
    res = await image(`/attachments/image/${id}`).expect(200);
    expect(Buffer.compare(res.body as Buffer, jpeg)).toBe(0);

    for (const [format, mimeType] of [
      ['png', 'image/png'],
      ['webp', 'image/webp'],
      ['gif', 'image/gif'],
    ] as const) {
      const source = await gradient(400, 200).toFormat(format).toBuffer();
      const other = await uploadImage(source, `x.${format}`);
      res = await image(`/attachments/image/${other}/x?width=50&height=50&cropType=cover`).expect(200);
      expect(res.headers['content-type']).toBe(mimeType);
      expect(await dims(res.body as Buffer)).toEqual({ width: 50, height: 50, format });
      res = await image(`/attachments/image/${other}/x?width=50&height=50&cropType=contain`).expect(200);
      expect(await dims(res.body as Buffer)).toEqual({ width: 50, height: 25, format });
    }
  });

  it('applies the EXIF orientation and strips metadata', async () => {
    // 40 x 20 stored sideways (orientation 6: rotate 90° clockwise to display), with EXIF and GPS data.
    const sideways = await gradient(40, 20)
      .jpeg()
      .withMetadata({ orientation: 6 })
      .withExif({ IFD0: { Copyright: 'private', Artist: 'someone' }, IFD3: { GPSLatitudeRef: 'N' } })
      .toBuffer();
    expect((await sharp(sideways).metadata()).orientation).toBe(6);
    const id = await uploadImage(sideways, 'phone.jpg');
    const res = await image(`/attachments/image/${id}?width=10&height=10&cropType=contain`).expect(200);
    const meta = await sharp(res.body as Buffer).metadata();
    expect({ width: meta.width, height: meta.height }).toEqual({ width: 5, height: 10 });
    expect(meta.orientation).toBeUndefined();
    expect(meta.exif).toBeUndefined();
    expect(meta.icc).toBeUndefined();
  });

  it('renders a variant once: cached in storage, concurrent first requests share one render', async () => {
    const id = await uploadImage(jpeg, 'cached.jpg');
    const url = `/attachments/image/${id}?width=160&height=90&cropType=cover`;
    const before = renders.mock.calls.length;
    const first = await image(url).expect(200);
    expect(renders.mock.calls.length).toBe(before + 1);
    // Stored right after the answer (the write follows the render), then served from storage.
    await waitFor(
      async () => ((await storage.keys(t.config.attachmentsRoot)).includes(`resized/${id}/160x90-cover`) ? true : null),
      5000,
      'variant stored',
    );
    const second = await image(url).expect(200);
    expect(renders.mock.calls.length).toBe(before + 1);
    expect(Buffer.compare(second.body as Buffer, first.body as Buffer)).toBe(0);
    expect(second.headers['content-length']).toBe(String((first.body as Buffer).length));

    const burst = `/attachments/image/${id}?width=64&height=64&cropType=contain`;
    const results = await Promise.all(Array.from({ length: 8 }, () => image(burst).expect(200)));
    expect(renders.mock.calls.length).toBe(before + 2);
    for (const r of results) expect(Buffer.compare(r.body as Buffer, results[0].body as Buffer)).toBe(0);
  });

  it('caching headers: the partition’s Cache-Control, a per-variant ETag and 304', async () => {
    const priv = await uploadImage(jpeg, 'p.jpg');
    const pub = await uploadImage(jpeg, 'q.jpg', 'publicMedia');
    let res = await image(`/attachments/image/${priv}?width=10&height=10`).expect(200);
    expect(res.headers['cache-control']).toBe('private, max-age=3600');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const etag = res.headers.etag;
    const other = await image(`/attachments/image/${priv}?width=11&height=10`).expect(200);
    expect(other.headers.etag).not.toBe(etag);
    const before = renders.mock.calls.length;
    const notModified = await image(`/attachments/image/${priv}?width=10&height=10`).set('If-None-Match', etag).expect(304);
    expect(notModified.headers.etag).toBe(etag);
    expect(renders.mock.calls.length).toBe(before);

    res = await image(`/attachments/image/${pub}/q.jpg?width=10&height=10`, {}).expect(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('partition rules: 401 without a session, 404 across tenants for private images; public ones for anyone', async () => {
    const priv = await uploadImage(jpeg, 'p.jpg');
    const pub = await uploadImage(jpeg, 'q.jpg', 'publicMedia');
    await refused(`/attachments/image/${priv}?width=10`, {}).expect(401);
    await refused(`/attachments/image/${priv}?width=10`, stranger).expect(404, { error: 'attachment not found' });
    await image(`/attachments/image/${pub}?width=10`, stranger).expect(200);
    await image(`/attachments/image/${pub}?width=10`, {}).expect(200);
  });

  it('400 for a non-image, a size outside 1..4000, an unknown cropType or too many pixels', async () => {
    const pdf = await uploadImage(Buffer.from('%PDF-1.7\n%%EOF\n'), 'doc.pdf');
    const svg = await uploadImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'), 'i.svg');
    const jpg = await uploadImage(jpeg, 'ok.jpg');
    for (const id of [pdf, svg]) {
      await refused(`/attachments/image/${id}?width=10`).expect(400, { error: 'attachment is not an image' });
    }
    for (const query of ['width=0', 'width=4001', 'height=-1', 'width=abc', 'width=1.5', 'cropType=fill']) {
      const res = await refused(`/attachments/image/${jpg}?${query}`).expect(400);
      expect(res.body.error).toMatch(/^validation failed/);
    }
    await refused('/attachments/image/not-a-uuid?width=10').expect(400);
    await image(`/attachments/image/${jpg}?width=4000&height=1&cropType=contain`).expect(200);

    const bomb = await uploadImage(pixelBombPng(), 'bomb.png');
    const res = await refused(`/attachments/image/${bomb}?width=10&height=10`).expect(400);
    expect(res.body.error).toMatch(/larger than 50000000 pixels/);
  });

  it('deleting an attachment removes its resized variants from storage', async () => {
    const id = await uploadImage(jpeg, 'gone.jpg');
    await image(`/attachments/image/${id}?width=20&height=20`).expect(200);
    await image(`/attachments/image/${id}?width=30&height=20&cropType=contain`).expect(200);
    const stored = async () => (await storage.keys(t.config.attachmentsRoot)).filter((k) => k.includes(id));
    await waitFor(async () => ((await stored()).length === 3 ? true : null), 5000, 'two variants and the original stored');
    await request(t.url).delete('/attachments').set(owner.auth).query({ id }).expect(200);
    expect(await stored()).toEqual([]);
    await refused(`/attachments/image/${id}?width=20&height=20`).expect(404);
  });
});
