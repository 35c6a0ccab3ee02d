import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Subscription } from 'rxjs';
import request from 'supertest';
import { waitFor } from '@app/service-kit/testing';
import { DataSource } from 'typeorm';
import { AccessLogService } from '../src/core/audit/access-log.service.js';
import { EventBus } from '../src/core/events/event-bus.service.js';
import type { PlatformEvent } from '../src/core/events/platform-event.js';
import { MAX_UPLOAD_BYTES } from '../src/modules/attachments/storage/streaming-upload.engine.js';
import { startTestStorage, type StorageDriverName, type TestStorage } from './support/attachments-storage.js';
import { Factories } from './support/factories.js';
import { startPlatformApp, type PlatformTestApp } from './support/platform-test-app.js';

type Auth = Record<string, string>;
interface UploadFile {
  data: Buffer;
  name: string;
  type?: string;
}

const MANAGE = ['attachments.view', 'attachments.manage'];
const PNG_1PX = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const SVG = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
const HTML = Buffer.from('<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>');

/** supertest: the response body as raw bytes, whatever its type. */
function binary(res: request.Response, done: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe.each(['local', 's3'] as StorageDriverName[])('attachments API on %s storage', (driver) => {
  let storage: TestStorage;
  let t: PlatformTestApp;
  let f: Factories;
  let ds: DataSource;
  let manager: Awaited<ReturnType<Factories['loggedInUser']>>;
  let viewer: Auth;
  let noFeatures: Auth;
  let stranger: Auth;
  const events: PlatformEvent[] = [];
  let subscription: Subscription;

  const upload = (auth: Auth, fields: Record<string, string>, file?: UploadFile, fileFirst = false) => {
    let req = request(t.url).post('/attachments').set(auth);
    const attach = () => {
      if (file) req = req.attach('file', file.data, { filename: file.name, contentType: file.type ?? 'application/octet-stream' });
    };
    if (fileFirst) attach();
    for (const [name, value] of Object.entries(fields)) req = req.field(name, value);
    if (!fileFirst) attach();
    return req;
  };
  const record = () => ({ entityId: 'crm:person', recordId: randomUUID() });
  const uploadOk = async (file: UploadFile, fields: Record<string, string> = record(), auth: Auth = manager.auth) => {
    const res = await upload(auth, fields, file).expect(200);
    return res.body.item as { id: string; url: string; fileName: string; fileSize: number; mimeType: string };
  };
  const getFile = (url: string, auth: Auth = {}) => request(t.url).get(url).set(auth).buffer(true).parse(binary);
  /** For refusals: their JSON error body. */
  const getRefused = (url: string, auth: Auth = {}) => request(t.url).get(url).set(auth);
  const storedKeys = () => storage.keys(t.config.attachmentsRoot);

  beforeAll(async () => {
    storage = await startTestStorage(driver);
    t = await startPlatformApp({ env: storage.env });
    f = Factories.of(t);
    ds = t.app.get(DataSource);
    manager = await f.loggedInUser(t, { features: MANAGE });
    viewer = (await f.loggedInUser(t, { features: ['attachments.view'] }, manager.tenant)).auth;
    noFeatures = (await f.loggedInUser(t, { features: [] }, manager.tenant)).auth;
    stranger = (await f.loggedInUser(t, { features: MANAGE })).auth;
    subscription = t.app
      .get(EventBus)
      .stream()
      .subscribe((e) => events.push(e));
  });
  afterAll(async () => {
    subscription?.unsubscribe();
    await t?.close();
    await storage?.close();
  });

  it('uploads and serves the bytes back exactly, with the sniffed type, ETag and length', async () => {
    const data = Buffer.concat([PNG_1PX, randomBytes(6 * 1024 * 1024)]); // > one S3 part: a multipart upload
    const res = await upload(manager.auth, record(), { data, name: 'photo.png', type: 'text/plain' }).expect(200);
    expect(res.body).toEqual({
      ok: true,
      item: {
        id: expect.any(String),
        url: `/attachments/file/${res.body.item.id}`,
        fileName: 'photo.png',
        fileSize: data.length,
        mimeType: 'image/png',
        partitionCode: 'privateAttachments',
        createdAt: expect.any(String),
        content: null,
      },
    });
    expect(res.headers['x-undo-token']).toBeUndefined();
    const file = await getFile(res.body.item.url, manager.auth).expect(200);
    expect(Buffer.compare(file.body as Buffer, data)).toBe(0);
    expect(file.headers['content-type']).toBe('image/png');
    expect(file.headers['content-length']).toBe(String(data.length));
    expect(file.headers.etag).toBe(`"${sha256(data)}"`);
    expect(file.headers['accept-ranges']).toBe('bytes');
    expect(file.headers['cache-control']).toBe('private, max-age=3600');
    expect(file.headers['x-content-type-options']).toBe('nosniff');
    expect(file.headers['content-disposition']).toBe(`inline; filename="photo.png"; filename*=UTF-8''photo.png`);
  });

  it('serves single ranges (206), answers 416 outside the file, 304 on a matching If-None-Match', async () => {
    const data = randomBytes(1000);
    const item = await uploadOk({ data, name: 'blob.bin' });
    const range = (header: string) => getFile(item.url, manager.auth).set('Range', header);

    let res = await range('bytes=10-19').expect(206);
    expect(Buffer.compare(res.body as Buffer, data.subarray(10, 20))).toBe(0);
    expect(res.headers['content-range']).toBe('bytes 10-19/1000');
    expect(res.headers['content-length']).toBe('10');
    res = await range('bytes=990-').expect(206);
    expect(Buffer.compare(res.body as Buffer, data.subarray(990))).toBe(0);
    res = await range('bytes=-5').expect(206);
    expect(Buffer.compare(res.body as Buffer, data.subarray(995))).toBe(0);
    expect(res.headers['content-range']).toBe('bytes 995-999/1000');
    res = await range('bytes=900-5000').expect(206);
    expect(res.headers['content-range']).toBe('bytes 900-999/1000');

    res = await range('bytes=1000-').expect(416);
    expect(res.headers['content-range']).toBe('bytes */1000');
    // Several ranges, other units, garbage: the whole file (RFC 9110 allows ignoring Range).
    for (const header of ['bytes=0-1,5-6', 'items=0-1', 'bytes=abc']) {
      res = await range(header).expect(200);
      expect((res.body as Buffer).length).toBe(1000);
    }
    // If-Range naming another version: the whole file.
    res = await range('bytes=0-1').set('If-Range', '"stale"').expect(200);
    expect((res.body as Buffer).length).toBe(1000);

    const etag = `"${sha256(data)}"`;
    res = await getFile(item.url, manager.auth).set('If-None-Match', `"other", ${etag}`).expect(304);
    expect(res.headers.etag).toBe(etag);
    expect((res.body as Buffer).length).toBe(0);
    await getFile(item.url, manager.auth).set('If-None-Match', '"other"').expect(200);
  });

  it('download=1 forces a download; SVG, HTML and unknown types are always downloads, nosniff and sandboxed', async () => {
    const png = await uploadOk({ data: PNG_1PX, name: 'été.png' });
    const res = await getFile(`${png.url}?download=1`, manager.auth).expect(200);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="_t_.png"; filename*=UTF-8''%C3%A9t%C3%A9.png`);

    for (const [data, name, mimeType] of [
      [SVG, 'logo.png', 'image/svg+xml'],
      [HTML, 'page.txt', 'text/html'],
      [randomBytes(64), 'x.exe', 'application/octet-stream'],
    ] as const) {
      const item = await uploadOk({ data, name, type: 'image/png' });
      expect(item.mimeType).toBe(mimeType);
      const file = await getFile(item.url, manager.auth).expect(200);
      // (Express appends a charset to text types.)
      expect(file.headers['content-type']).toMatch(new RegExp(`^${mimeType.replace('+', '\\+')}(;|$)`));
      expect(file.headers['content-disposition']).toMatch(/^attachment; /);
      expect(file.headers['x-content-type-options']).toBe('nosniff');
      expect(file.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    }
  });

  it('streams: the bytes reach storage while the request is still being sent', async () => {
    const boundary = `----attachments${randomBytes(8).toString('hex')}`;
    const part = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const first = randomBytes(7 * 1024 * 1024); // more than one S3 part
    const second = randomBytes(1024 * 1024);
    const diskBefore = storage.bytesOnDisk(t.config.attachmentsRoot);
    const req = http.request(`${t.url}/attachments`, {
      method: 'POST',
      headers: { ...manager.auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
    });
    req.write(part('entityId', 'crm:person') + part('recordId', 'streamed'));
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="stream.bin"\r\n\r\n`);
    req.write(first);
    // The request is still open: what storage holds already can only have been streamed there.
    await waitFor(
      () => (storage.bytesOnDisk(t.config.attachmentsRoot) - diskBefore >= 5 * 1024 * 1024 ? true : null),
      10_000,
      'bytes on disk',
    );
    req.end(Buffer.concat([second, Buffer.from(`\r\n--${boundary}--\r\n`)]));
    const res = await response;
    expect(res.status).toBe(200);
    const item = JSON.parse(res.body).item as { url: string; fileSize: number };
    expect(item.fileSize).toBe(first.length + second.length);
    const file = await getFile(item.url, manager.auth).expect(200);
    expect(Buffer.compare(file.body as Buffer, Buffer.concat([first, second]))).toBe(0);
  });

  it('refuses a file over 25 MB with 413 while streaming, and keeps nothing of it', async () => {
    const before = await storedKeys();
    const fields = record();
    const res = await upload(manager.auth, fields, { data: Buffer.alloc(MAX_UPLOAD_BYTES + 1, 7), name: 'big.bin' }).expect(413);
    expect(res.body).toEqual({ error: 'file exceeds the upload limit of 25 MB' });
    expect(await storedKeys()).toEqual(before);
    const list = await request(t.url).get('/attachments').set(manager.auth).query(fields).expect(200);
    expect(list.body.items).toEqual([]);
  });

  it('400 for a missing file, a missing id or an unknown partition; a refused form leaves nothing stored', async () => {
    const before = await storedKeys();
    let res = await upload(manager.auth, record()).expect(400);
    expect(res.body.error).toBe('file is required');
    res = await upload(manager.auth, { recordId: 'r1' }, { data: PNG_1PX, name: 'a.png' }, true).expect(400);
    expect(res.body.error).toContain('entityId');
    expect(res.body.details).toContainEqual(expect.objectContaining({ field: 'entityId' }));
    res = await upload(manager.auth, { ...record(), partitionCode: 'elsewhere' }, { data: PNG_1PX, name: 'a.png' }, true).expect(400);
    expect(res.body.details[0].field).toBe('partitionCode');
    // Two files, or a file under another field name: refused by the form limits.
    await request(t.url)
      .post('/attachments')
      .set(manager.auth)
      .field('entityId', 'e')
      .field('recordId', 'r')
      .attach('file', PNG_1PX, 'a.png')
      .attach('file', PNG_1PX, 'b.png')
      .expect(400);
    await request(t.url).post('/attachments').set(manager.auth).field('entityId', 'e').attach('other', PNG_1PX, 'a.png').expect(400);
    await waitFor(
      async () => (JSON.stringify(await storedKeys()) === JSON.stringify(before) ? true : null),
      5000,
      'refused uploads removed',
    );
  });

  it('needs authentication and attachments.manage / attachments.view', async () => {
    const file = { data: PNG_1PX, name: 'a.png' };
    await upload({}, record(), file).expect(401, { error: 'unauthorized' });
    await upload(viewer, record(), file).expect(403);
    await request(t.url).get('/attachments').query(record()).expect(401);
    await request(t.url).get('/attachments').set(noFeatures).query(record()).expect(403);
    await request(t.url).delete('/attachments').set(viewer).query({ id: randomUUID() }).expect(403);
  });

  it('lists a record’s attachments newest first, paged, only in the caller’s tenant', async () => {
    const fields = record();
    const ids: string[] = [];
    for (const name of ['one.bin', 'two.bin', 'three.bin']) ids.push((await uploadOk({ data: randomBytes(10), name }, fields)).id);
    await uploadOk({ data: randomBytes(10), name: 'other.bin' }, { ...fields, recordId: 'another' });

    const res = await request(t.url).get('/attachments').set(viewer).query(fields).expect(200);
    expect(res.body.items.map((i: { id: string }) => i.id)).toEqual([...ids].reverse());
    expect(res.body.items[0]).toEqual({
      id: ids[2],
      url: `/attachments/file/${ids[2]}`,
      fileName: 'three.bin',
      fileSize: 10,
      mimeType: 'application/octet-stream',
      partitionCode: 'privateAttachments',
      createdAt: expect.any(String),
      content: null,
    });
    const page2 = await request(t.url)
      .get('/attachments')
      .set(viewer)
      .query({ ...fields, page: 2, pageSize: 2 })
      .expect(200);
    expect(page2.body.items.map((i: { id: string }) => i.id)).toEqual([ids[0]]);
    const other = await request(t.url).get('/attachments').set(stranger).query(fields).expect(200);
    expect(other.body.items).toEqual([]);

    await request(t.url).get('/attachments').set(viewer).query({ entityId: 'crm:person' }).expect(400);
    await request(t.url)
      .get('/attachments')
      .set(viewer)
      .query({ ...fields, pageSize: 201 })
      .expect(400);
  });

  it('partitions: private files need a session of the tenant and attachments.view; public ones need nothing', async () => {
    const priv = await uploadOk({ data: PNG_1PX, name: 'private.png' });
    const pub = await uploadOk({ data: PNG_1PX, name: 'public.png' }, { ...record(), partitionCode: 'publicMedia' });

    await getRefused(priv.url).expect(401, { error: 'authentication required' });
    await getRefused(priv.url, stranger).expect(404, { error: 'attachment not found' });
    await getRefused(priv.url, noFeatures).expect(403);
    await getFile(priv.url, viewer).expect(200);
    // Browsers: the auth_token cookie; an invalid token reads as no session.
    await getFile(priv.url, { Cookie: `auth_token=${manager.token}` }).expect(200);
    await getRefused(priv.url, { Authorization: 'Bearer not-a-jwt' }).expect(401);

    for (const auth of [{}, stranger, noFeatures, { Authorization: 'Bearer not-a-jwt' }]) {
      const res = await getFile(pub.url, auth).expect(200);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    // Unknown ids say nothing: 401 without a session, 404 with one; malformed ids and no id 400.
    await getRefused(`/attachments/file/${randomUUID()}`).expect(401);
    await getRefused(`/attachments/file/${randomUUID()}`, viewer).expect(404);
    await getRefused('/attachments/file/not-a-uuid', viewer).expect(400);
    await getRefused('/attachments/file', viewer).expect(400);
    // Writes of a public file still need the tenant and attachments.manage.
    await request(t.url).delete('/attachments').set(stranger).query({ id: pub.id }).expect(404);
    await request(t.url).delete('/attachments').query({ id: pub.id }).expect(401);
  });

  it('deletes: 404 across tenants, removes the row and the stored file, 404 afterwards', async () => {
    const data = randomBytes(100);
    const item = await uploadOk({ data, name: 'gone.bin' });
    const key = (await ds.query('SELECT storage_key FROM attachments WHERE id = $1', [item.id]))[0].storage_key as string;
    expect(await storedKeys()).toContain(driver === 'local' ? path.normalize(key) : key);

    await request(t.url).delete('/attachments').set(stranger).query({ id: item.id }).expect(404, { error: 'attachment not found' });
    await getFile(item.url, manager.auth).expect(200);
    await request(t.url).delete('/attachments').set(manager.auth).expect(400);
    const res = await request(t.url).delete('/attachments').set(manager.auth).query({ id: item.id }).expect(200, { ok: true });
    expect(res.headers['x-undo-token']).toBeUndefined();
    await getRefused(item.url, manager.auth).expect(404);
    expect(await storedKeys()).not.toContain(driver === 'local' ? path.normalize(key) : key);
    await request(t.url).delete('/attachments').set(manager.auth).query({ id: item.id }).expect(404);
  });

  it('records uploads and deletes as commands in the action log, emits their events, logs reads', async () => {
    const fields = record();
    const item = await uploadOk({ data: PNG_1PX, name: 'logged.png' }, fields);
    await getFile(item.url, manager.auth).expect(200);
    await request(t.url).get('/attachments').set(manager.auth).query(fields).expect(200);
    await request(t.url).delete('/attachments').set(manager.auth).query({ id: item.id }).expect(200);

    const entries = await ds.query(
      `SELECT command_id, action_type, actor_user_id, undo_token, snapshot_before, snapshot_after
         FROM action_logs WHERE resource_id = $1 ORDER BY created_at`,
      [item.id],
    );
    expect(entries).toEqual([
      expect.objectContaining({
        command_id: 'attachments.upload',
        action_type: 'create',
        actor_user_id: manager.user.id,
        undo_token: null,
      }),
      expect.objectContaining({ command_id: 'attachments.delete', action_type: 'delete', undo_token: null, snapshot_after: null }),
    ]);
    expect(entries[0].snapshot_after).toMatchObject({
      id: item.id,
      fileName: 'logged.png',
      mimeType: 'image/png',
      fileSize: PNG_1PX.length,
    });
    expect(entries[0].snapshot_after).not.toHaveProperty('storageKey');
    expect(entries[1].snapshot_before).toMatchObject({ id: item.id, entityId: fields.entityId, recordId: fields.recordId });

    await waitFor(() => (events.filter((e) => e.payload.id === item.id).length === 2 ? true : null), 5000, 'both events');
    expect(events.filter((e) => e.payload.id === item.id).map((e) => [e.id, e.tenantId])).toEqual([
      ['attachments.attachment.created', manager.tenant.id],
      ['attachments.attachment.deleted', manager.tenant.id],
    ]);

    await t.app.get(AccessLogService).flush();
    const reads = await ds.query(
      `SELECT access_type, resource_id FROM access_logs WHERE resource_kind = 'attachments.attachment' AND actor_user_id = $1
         AND (resource_id = $2 OR context->>'recordId' = $3) ORDER BY created_at`,
      [manager.user.id, item.id, fields.recordId],
    );
    expect(reads).toEqual([
      { access_type: 'read', resource_id: item.id },
      { access_type: 'read:list', resource_id: null },
    ]);
  });
});
