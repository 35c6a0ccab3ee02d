import { Readable } from 'node:stream';

/**
 * A file response as the services describe it, free of any HTTP framework: the controllers turn it
 * into a web `Response` (`toWebResponse`), which Nest sends with its status and headers as they are
 * and streams with backpressure.
 */
export interface ServedFile {
  status: 200 | 206 | 304;
  headers: Record<string, string>;
  /** null for a 304. */
  body: Readable | Buffer | null;
}

export function toWebResponse(file: ServedFile): Response {
  const body = file.body === null ? null : Buffer.isBuffer(file.body) ? file.body : (Readable.toWeb(file.body) as ReadableStream);
  return new Response(body, { status: file.status, headers: file.headers });
}

export type RangeRequest = { kind: 'whole' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

const BYTES_PREFIX = 'bytes=';
const DIGITS = /^\d{1,15}$/;

/**
 * One `Range: bytes=a-b`, `bytes=a-` or `bytes=-n` against a file of `size` bytes (RFC 9110 14.1.2).
 * Anything else (other units, several ranges, malformed) is served whole, which the RFC allows; a
 * well-formed range that misses the file is unsatisfiable (416).
 */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (!header?.startsWith(BYTES_PREFIX)) return { kind: 'whole' };
  const spec = header.slice(BYTES_PREFIX.length).trim();
  const dash = spec.indexOf('-');
  if (dash < 0 || spec.includes(',')) return { kind: 'whole' };
  const first = spec.slice(0, dash).trim();
  const last = spec.slice(dash + 1).trim();
  if (first === '') {
    if (!DIGITS.test(last)) return { kind: 'whole' };
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  if (!DIGITS.test(first) || (last !== '' && !DIGITS.test(last))) return { kind: 'whole' };
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end };
}

/** `If-None-Match` against our strong ETag: `*`, or the tag in its comma list (weak comparison, RFC 9110 13.1.2). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const wanted = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === wanted;
  });
}

/** `If-Range` lets a range through only while the file is still the one the client has part of. */
export function ifRangeAllows(ifRange: string | undefined, etag: string): boolean {
  return ifRange === undefined || ifRange.trim() === etag;
}

/**
 * `inline` or `attachment` with the file name: an ASCII fallback (`filename`, quotes and anything
 * outside printable ASCII replaced) and the exact name in UTF-8 (`filename*`, RFC 6266 / 8187).
 */
export function contentDisposition(kind: 'inline' | 'attachment', fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
