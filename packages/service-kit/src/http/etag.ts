import { hash } from 'node:crypto';

/**
 * Express's default ETag (`etag` setting `weak`, the `etag` package): `W/"<byte length in hex>-<the
 * first 27 base64 characters of the body's SHA-1>"`. The same value, from Node's one-shot
 * `crypto.hash`: the default builds a Hash object per response and, for a string body, copies it into
 * a Buffer first (about half a microsecond of a small JSON response, bench/README.md "HTTP stack").
 * Express hands over the body as a Buffer (it has computed Content-Length from one); a string is
 * hashed in its `encoding`.
 */
export function weakEtag(body: Buffer | string, encoding?: BufferEncoding): string {
  const bytes = typeof body === 'string' ? Buffer.from(body, encoding) : body;
  if (bytes.length === 0) return EMPTY_BODY_ETAG;
  return `W/"${bytes.length.toString(16)}-${hash('sha1', bytes, 'base64').slice(0, 27)}"`;
}

const EMPTY_BODY_ETAG = 'W/"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"';
