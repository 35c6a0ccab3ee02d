import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import request from 'supertest';
import { embeddedIPv4Addresses, guardedLookup, isNonPublicAddress, isNonPublicHost } from '@app/service-kit';
import type { MailConfig } from '../src/config/mail-config.js';
import { WebhookClient } from '../src/modules/workflows/webhook-client.js';
import { bearer, createProject, expectValidationError } from './support/mail-api-helpers.js';
import { startMailApp } from './support/mail-test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/workflow-test-kit.js';

const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
const octets = (v4: string) => v4.split('.').map(Number);

/** Every IPv6 form that carries an IPv4 address, written as people (and attackers) write them. */
const EMBEDDINGS: Record<string, (v4: string) => string> = {
  'IPv4-compatible (::/96)': (v4) => `::${v4}`,
  'IPv4-compatible, hex': (v4) => {
    const [a, b, c, d] = octets(v4);
    return `0:0:0:0:0:0:${hex(a, b)}:${hex(c, d)}`;
  },
  'IPv4-mapped (::ffff:0:0/96)': (v4) => `::ffff:${v4}`,
  'IPv4-mapped, hex, upper case': (v4) => {
    const [a, b, c, d] = octets(v4);
    return `::FFFF:${hex(a, b)}:${hex(c, d)}`.toUpperCase();
  },
  'IPv4-translated (::ffff:0:0:0/96)': (v4) => `::ffff:0:${v4}`,
  'NAT64 (64:ff9b::/96)': (v4) => `64:ff9b::${v4}`,
  '6to4 (2002::/16)': (v4) => {
    const [a, b, c, d] = octets(v4);
    return `2002:${hex(a, b)}:${hex(c, d)}::1`;
  },
  'Teredo client (2001::/32, obfuscated)': (v4) => {
    const [a, b, c, d] = octets(v4).map((o) => o ^ 0xff);
    // Server 65.54.227.120 (public): only the client address decides.
    return `2001:0:4136:e378:8000:63bf:${hex(a, b)}:${hex(c, d)}`;
  },
};

const PRIVATE_V4 = ['127.0.0.1', '10.1.2.3', '172.16.5.4', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1'];
const PUBLIC_V4 = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '151.101.1.69'];

describe('non-public address classification (service-kit), as mail webhooks and AI base URLs use it', () => {
  it.each(Object.entries(EMBEDDINGS))('%s: as public as the IPv4 address it carries', (_form, embed) => {
    for (const v4 of PRIVATE_V4) {
      expect({ address: embed(v4), refused: isNonPublicAddress(embed(v4)) }).toEqual({ address: embed(v4), refused: true });
      // The same literal as a URL host (the WHATWG parser rewrites it to hex groups first).
      const host = new URL(`http://[${embed(v4)}]:8080/x`).hostname;
      expect({ host, refused: isNonPublicHost(host) }).toEqual({ host, refused: true });
    }
    for (const v4 of PUBLIC_V4) {
      expect({ address: embed(v4), refused: isNonPublicAddress(embed(v4)) }).toEqual({ address: embed(v4), refused: false });
    }
  });

  it('property: every embedding of any IPv4 address is judged exactly as that address', () => {
    const anyV4 = fc.oneof(
      fc.ipV4(),
      // Biased towards the refused ranges, where a slip matters.
      fc
        .constantFrom('127', '10', '192.168', '172.16', '172.31', '169.254', '100.64', '0')
        .chain((prefix) =>
          fc
            .array(fc.integer({ min: 0, max: 255 }), { minLength: 4 - prefix.split('.').length, maxLength: 4 - prefix.split('.').length })
            .map((rest) => [prefix, ...rest].join('.')),
        ),
    );
    fc.assert(
      fc.property(anyV4, fc.constantFrom(...Object.values(EMBEDDINGS)), (v4, embed) => {
        expect(isNonPublicAddress(embed(v4))).toBe(isNonPublicAddress(v4));
        expect(isNonPublicHost(new URL(`http://[${embed(v4)}]/`).hostname)).toBe(isNonPublicAddress(v4));
      }),
      { numRuns: 2000 },
    );
  });

  it('finds the embedded IPv4 addresses of each form (both of Teredo)', () => {
    const parts = (s: string) =>
      new URL(`http://[${s}]/`).hostname
        .slice(1, -1)
        .split('::')
        .map((half) => (half ? half.split(':').map((g) => parseInt(g, 16)) : []))
        .reduce((head, tail) => [...head, ...Array(8 - head.length - tail.length).fill(0), ...tail]);
    expect(embeddedIPv4Addresses(parts('::127.0.0.1'))).toEqual(['127.0.0.1']);
    expect(embeddedIPv4Addresses(parts('::ffff:0:10.0.0.1'))).toEqual(['10.0.0.1']);
    expect(embeddedIPv4Addresses(parts('2002:c0a8:1::'))).toEqual(['192.168.0.1']);
    expect(embeddedIPv4Addresses(parts('2001:0:4136:e378:8000:63bf:3fff:fdd2'))).toEqual(['65.54.227.120', '192.0.2.45']);
    expect(embeddedIPv4Addresses(parts('2606:4700::1111'))).toEqual([]);
  });

  it('IPv6 ranges that are never public, whatever they carry; public IPv6 passes', () => {
    for (const address of [
      '::1',
      '::',
      'fe80::1',
      'fe80::1%eth0',
      'fc00::1',
      'fd12:3456::1',
      'fec0::1',
      'ff02::1',
      '2001:db8::1',
      '100::1',
      '64:ff9b:1::a00:1',
      '2001:2::1',
      '3fff::1',
    ]) {
      expect({ address, refused: isNonPublicAddress(address) }).toEqual({ address, refused: true });
    }
    for (const address of ['2606:4700:4700::1111', '2a00:1450:4001:81c::200e', '2001:4860:4860::8888']) {
      expect({ address, refused: isNonPublicAddress(address) }).toEqual({ address, refused: false });
    }
    // What is not an address at all cannot be judged public.
    for (const junk of ['', 'localhost', '::g', '1.2.3', '::ffff:1.2.3.4.5']) expect(isNonPublicAddress(junk)).toBe(true);
    expect(isNonPublicHost('LOCALHOST.')).toBe(true);
    expect(isNonPublicHost('api.localhost')).toBe(true);
    expect(isNonPublicHost('hooks.example.com')).toBe(false);
  });

  it('the connect-time guard refuses a name that resolves to loopback', async () => {
    const error = await new Promise<Error | null>((resolve) => guardedLookup('localhost', {}, (err) => resolve(err)));
    expect(error).toMatchObject({ name: 'NonPublicAddressError', message: 'refused: localhost resolves to a private or loopback address' });
  });
});

describe('mail workflow webhooks in production: embedded-IPv4 forms of private addresses are refused', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('POST /workflows answers 422 privateAddress for each form, and 201 for the same forms of a public address', async () => {
    const prod = await startMailApp({
      env: { NODE_ENV: 'production', MAIL_LINK_SECRET: randomBytes(32).toString('hex'), MAIL_SECRETS_KEY: randomBytes(32).toString('hex') },
    });
    try {
      const key = (await createProject(prod)).secretKey;
      const hook = (url: string) => ({ name: 'W', eventName: 'signed-up', steps: [{ id: 'h', type: 'WEBHOOK', config: { url } }] });
      for (const url of [
        'http://[::127.0.0.1]/',
        'http://[::7f00:1]:6379/',
        'http://[::ffff:0:127.0.0.1]/',
        'http://[::ffff:0:a9fe:a9fe]/latest',
        'http://[64:ff9b::10.0.0.1]/',
        'http://[2002:7f00:1::1]/',
        'http://[2002:a9fe:a9fe::]/latest',
        'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
      ]) {
        const res = await request(prod.url).post('/workflows').set(bearer(key)).send(hook(url));
        expectValidationError(res, [{ field: 'steps[0].config.url', code: 'privateAddress' }]);
      }
      for (const url of ['http://[64:ff9b::8.8.8.8]/', 'http://[2002:808:808::1]/', 'http://[::ffff:1.1.1.1]/']) {
        await request(prod.url).post('/workflows').set(bearer(key)).send(hook(url)).expect(201);
      }
    } finally {
      await prod.close();
    }
  });

  it('the webhook client refuses them before connecting; the receiver on loopback gets nothing', async () => {
    const client = new WebhookClient({
      env: 'production',
      workflows: { webhookAllowPrivate: false, webhookTimeoutMs: 1000, webhookRetryBaseMs: 10, sweepSeconds: 30, concurrency: 1 },
    } as MailConfig);
    const port = new URL(receiver.url).port;
    for (const host of ['[::127.0.0.1]', '[::ffff:0:127.0.0.1]', '[::ffff:127.0.0.1]', '[64:ff9b::127.0.0.1]', '[2002:7f00:1::]']) {
      const url = `http://${host}:${port}/a`;
      const result = await client.send({ url, method: 'POST', headers: {}, body: '{}', secret: 's', deliveryId: 'd', attempt: 1 });
      expect(result).toEqual({ ok: false, error: `refused: ${new URL(url).hostname} is a private or loopback address` });
    }
    expect(receiver.requests).toHaveLength(0);
  });
});
