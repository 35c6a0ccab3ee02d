import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadPlatformConfig } from '../src/config/platform-config.js';
import { cleanFileName } from '../src/modules/attachments/attachments.service.js';
import { contentDisposition, etagMatches, parseRange } from '../src/modules/attachments/file-response.js';
import { sniffMimeType } from '../src/modules/attachments/mime-sniffer.js';
import { MAX_UPLOAD_BYTES, UploadInspector } from '../src/modules/attachments/storage/streaming-upload.engine.js';

const bytes = (...values: number[]) => Buffer.from(values);
const text = (s: string) => Buffer.from(s, 'utf8');

describe('attachments: type sniffing, ranges, validators and the upload limit', () => {
  it('sniffs binary formats by magic bytes, markup by its prefix, else octet-stream', () => {
    expect(sniffMimeType(bytes(0xff, 0xd8, 0xff, 0xe0, 0, 0))).toBe('image/jpeg');
    expect(sniffMimeType(bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0))).toBe('image/png');
    expect(sniffMimeType(text('GIF89a....'))).toBe('image/gif');
    expect(sniffMimeType(text('GIF87a....'))).toBe('image/gif');
    expect(sniffMimeType(Buffer.concat([text('RIFF'), bytes(1, 2, 3, 4), text('WEBPVP8 ')]))).toBe('image/webp');
    expect(sniffMimeType(text('RIFF\u0001\u0002\u0003\u0004WAVEfmt '))).toBe('application/octet-stream');
    expect(sniffMimeType(text('%PDF-1.7\n'))).toBe('application/pdf');
    expect(sniffMimeType(text('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBe('image/svg+xml');
    expect(sniffMimeType(text('\ufeff  \n<?xml version="1.0"?>\n<!-- made by hand -->\n<svg/>'))).toBe('image/svg+xml');
    expect(sniffMimeType(text('<!-- Generator: editor -->\n<svg/>'))).toBe('image/svg+xml');
    expect(sniffMimeType(text('<?xml version="1.0"?><note/>'))).toBe('application/xml');
    expect(sniffMimeType(text('<?xml version="1.0"?><!DOCTYPE html><html/>'))).toBe('text/html');
    for (const html of ['<!DOCTYPE html>', '<HTML>', ' <script>alert(1)</script>', '<body onload=x>', '<iframe src=x>', '<!-- x -->']) {
      expect(sniffMimeType(text(html))).toBe('text/html');
    }
    // A tag name must end where the standard says: `<bold>` is not `<b>`, `<abbr>` not `<a>`.
    expect(sniffMimeType(text('<abbr>'))).toBe('application/octet-stream');
    expect(sniffMimeType(text('plain text, not markup'))).toBe('application/octet-stream');
    expect(sniffMimeType(Buffer.alloc(0))).toBe('application/octet-stream');
  });

  it('parses one byte range; several, other units and malformed ones mean the whole file', () => {
    expect(parseRange('bytes=0-9', 100)).toEqual({ kind: 'partial', start: 0, end: 9 });
    expect(parseRange('bytes=90-', 100)).toEqual({ kind: 'partial', start: 90, end: 99 });
    expect(parseRange('bytes=-10', 100)).toEqual({ kind: 'partial', start: 90, end: 99 });
    expect(parseRange('bytes=-1000', 100)).toEqual({ kind: 'partial', start: 0, end: 99 });
    expect(parseRange('bytes=50-1000', 100)).toEqual({ kind: 'partial', start: 50, end: 99 });
    expect(parseRange('bytes=100-', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-0', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=0-0', 0)).toEqual({ kind: 'unsatisfiable' });
    for (const header of [undefined, '', 'bytes=9-1', 'bytes=0-1,3-4', 'items=0-1', 'bytes=a-b', 'bytes=1', `bytes=0-${'9'.repeat(40)}`]) {
      expect(parseRange(header, 100)).toEqual({ kind: 'whole' });
    }
  });

  it('matches If-None-Match lists, weak tags and *; builds safe Content-Disposition names', () => {
    expect(etagMatches('"a", W/"b"', '"b"')).toBe(true);
    expect(etagMatches('*', '"b"')).toBe(true);
    expect(etagMatches('"a"', '"b"')).toBe(false);
    expect(etagMatches(undefined, '"b"')).toBe(false);
    expect(contentDisposition('attachment', 'a"b\\c\r\n.html')).toBe(
      `attachment; filename="a_b_c__.html"; filename*=UTF-8''a%22b%5Cc%0D%0A.html`,
    );
    expect(contentDisposition('inline', "rapport d'été (1).pdf")).toBe(
      `inline; filename="rapport d'_t_ (1).pdf"; filename*=UTF-8''rapport%20d%27%C3%A9t%C3%A9%20%281%29.pdf`,
    );
  });

  it('the upload inspector passes exactly 25 MB and fails one byte more with 413, hashing what passed', async () => {
    const drain = async (size: number) => {
      const inspector = new UploadInspector(MAX_UPLOAD_BYTES);
      const chunk = Buffer.alloc(1024 * 1024, 1);
      const source = Readable.from(
        (function* () {
          for (let left = size; left > 0; left -= chunk.length) yield chunk.subarray(0, Math.min(left, chunk.length));
        })(),
      );
      let passed = 0;
      await pipeline(source, inspector, async (input: AsyncIterable<Buffer>) => {
        for await (const c of input) passed += c.length;
      });
      expect(passed).toBe(size);
      return inspector;
    };
    const ok = await drain(MAX_UPLOAD_BYTES);
    expect(ok.bytes).toBe(MAX_UPLOAD_BYTES);
    expect(ok.checksum()).toMatch(/^[0-9a-f]{64}$/);
    await expect(drain(MAX_UPLOAD_BYTES + 1)).rejects.toMatchObject({ status: 413 });
  });

  it('keeps the client’s file name without paths or control characters', () => {
    expect(cleanFileName('C:\\Users\\me\\report.pdf')).toBe('report.pdf');
    expect(cleanFileName('../../etc/passwd')).toBe('passwd');
    expect(cleanFileName('a\u0000b\r\n.txt')).toBe('ab.txt');
    expect(cleanFileName('   ')).toBe('file');
    expect(cleanFileName(undefined)).toBe('file');
    expect(cleanFileName('x'.repeat(300))).toHaveLength(255);
  });

  it('configures the storage driver: local by default; s3 needs a bucket, and its keys go together', () => {
    const DATA_DIR = mkdtempSync(path.join(os.tmpdir(), 'attachments-config-'));
    expect(loadPlatformConfig({ DATA_DIR }).attachmentsStorage).toEqual({ driver: 'local' });
    expect(loadPlatformConfig({ DATA_DIR, ATTACHMENTS_DRIVER: 's3', ATTACHMENTS_S3_BUCKET: 'b' }).attachmentsStorage).toEqual({
      driver: 's3',
      endpoint: null,
      bucket: 'b',
      region: 'us-east-1',
      credentials: null,
      forcePathStyle: true,
    });
    expect(() => loadPlatformConfig({ DATA_DIR, ATTACHMENTS_DRIVER: 's3' })).toThrow(/ATTACHMENTS_S3_BUCKET is required/);
    expect(() =>
      loadPlatformConfig({ DATA_DIR, ATTACHMENTS_DRIVER: 's3', ATTACHMENTS_S3_BUCKET: 'b', ATTACHMENTS_S3_ACCESS_KEY: 'k' }),
    ).toThrow(/go together/);
    expect(() => loadPlatformConfig({ DATA_DIR, ATTACHMENTS_DRIVER: 'ftp' })).toThrow(/ATTACHMENTS_DRIVER/);
  });
});
