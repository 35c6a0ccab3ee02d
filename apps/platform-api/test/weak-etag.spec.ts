import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import { weakEtag } from '@app/service-kit';

// createHttpApp computes ETags with weakEtag instead of Express's default generator (a Hash object per
// response): every ETag a client has stored must stay the same, so the two Express apps below, one
// with the default and one with weakEtag, must answer the same header for the same body, and a
// matching If-None-Match must still be a 304.
describe('weakEtag (the ETag of every response)', () => {
  const bodies: Record<string, string | Buffer | object> = {
    json: { status: 'ok', items: [1, 2, 3] },
    unicode: 'héllo wörld ✓ 日本',
    empty: '',
    buffer: Buffer.from([0, 1, 2, 250, 255]),
    large: 'x'.repeat(100_000),
  };
  const servers: { close(): void }[] = [];
  let defaultUrl = '';
  let ourUrl = '';

  const start = (configure: (app: express.Express) => void): Promise<string> => {
    const app = express();
    configure(app);
    app.get('/:name', (req, res) => {
      const body = bodies[req.params.name];
      if (Buffer.isBuffer(body)) res.type('bin');
      res.send(body);
    });
    return new Promise((resolve) => {
      const server = app.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
      servers.push(server);
    });
  };

  beforeAll(async () => {
    defaultUrl = await start(() => undefined);
    ourUrl = await start((app) => app.set('etag', weakEtag));
  });
  afterAll(() => {
    for (const server of servers) server.close();
  });

  it.each(Object.keys(bodies))('gives the %s body the ETag Express gives it by default', async (name) => {
    const expected = (await fetch(`${defaultUrl}/${name}`)).headers.get('etag');
    const ours = await fetch(`${ourUrl}/${name}`);
    expect(expected).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/);
    expect(ours.headers.get('etag')).toBe(expected);
  });

  // node:http rather than fetch: fetch adds `Cache-Control: no-cache` to a conditional request, which
  // makes Express skip the freshness check.
  const statusWith = (url: string, ifNoneMatch: string) =>
    new Promise<number>((resolve, reject) => {
      get(url, { headers: { 'If-None-Match': ifNoneMatch } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', reject);
    });

  it('still answers 304 to a matching If-None-Match, and 200 to a stale one', async () => {
    const etag = (await fetch(`${ourUrl}/json`)).headers.get('etag') ?? '';
    expect(await statusWith(`${ourUrl}/json`, etag)).toBe(304);
    expect(await statusWith(`${ourUrl}/json`, 'W/"f-stale"')).toBe(200);
  });

  it('hashes a string body in the encoding it is given', () => {
    expect(weakEtag('héllo', 'latin1')).toBe(weakEtag(Buffer.from('héllo', 'latin1')));
    expect(weakEtag('héllo')).toBe(weakEtag(Buffer.from('héllo', 'utf8')));
    expect(weakEtag('')).toBe('W/"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"');
  });
});
