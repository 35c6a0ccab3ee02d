import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import net, { type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { loadMailConfig } from '../src/config/mail-config.js';
import { MailTransport } from '../src/modules/delivery/mail-transport.js';
import { connectToRelay } from '../src/modules/delivery/relay-socket.js';
import { RelayThrottle } from '../src/modules/delivery/relay-throttle.js';
import { startSmtpSink, type SinkTls } from './support/smtp-sink.js';

/** Whether Node will open (or opened) the socket with TCP_NODELAY: the flag `setNoDelay` and `noDelay` store. */
function noDelayOf(socket: net.Socket): boolean {
  const flag = Object.getOwnPropertySymbols(socket).find((s) => s.description === 'kSetNoDelay');
  if (!flag) throw new Error('this Node keeps no kSetNoDelay flag on its sockets: check relay-socket.spec');
  return (socket as unknown as Record<symbol, boolean>)[flag];
}

describe('relay connections (a real SMTP server on loopback)', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true });
  });
  afterAll(() => redis.quit().catch(() => undefined));

  it('connectToRelay answers a connected socket with Nagle off', async () => {
    const server = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const socket = await new Promise<net.Socket>((resolve, reject) =>
        connectToRelay({ host: '127.0.0.1', port }, (err, answer) => (err ? reject(err) : resolve(answer!.connection))),
      );
      // Without `noDelay` every message waited for the relay's delayed ACKs: 166 emails/s over 8 connections.
      expect(noDelayOf(socket)).toBe(true);
      expect(socket.remotePort).toBe(port);
      socket.destroy();
    } finally {
      server.close();
    }
  });

  it('connectToRelay reports a refused connection as an error, once', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const answers: unknown[] = [];
    await new Promise<void>((resolve) =>
      connectToRelay({ host: '127.0.0.1', port }, (err) => {
        answers.push(err);
        resolve();
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(answers).toHaveLength(1);
    expect((answers[0] as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });

  it.each<[string, SinkTls, string]>([
    ['smtps: (TLS from the first byte)', 'implicit', '?tls.rejectUnauthorized=false'],
    ['smtp: with STARTTLS', 'starttls', '?tls.rejectUnauthorized=false&requireTLS=true'],
  ])('MailTransport delivers over its own sockets on %s', async (_name, tls, query) => {
    const relay = await startSmtpSink({ tls });
    const config = { ...loadMailConfig({}), smtpUrl: `${relay.url}${query}`, smtpPoolSize: 2 };
    const transport = new MailTransport(config, new RelayThrottle(redis, config));
    try {
      // The pool takes its sockets from connectToRelay (nodemailer keeps the hook as the pool's getSocket).
      expect((transport as unknown as { transporter: { transporter: { getSocket: unknown } } }).transporter.transporter.getSocket).toBe(
        connectToRelay,
      );
      await Promise.all(
        [1, 2, 3].map((i) =>
          transport.send({ from: 'news@mail.example.com', to: 'ada@example.net', subject: `over tls ${i}`, text: 'hello' }, `m${i}`),
        ),
      );
      const subjects = await Promise.all(relay.messages.map(async (m) => (await relay.parse(m)).subject));
      expect(subjects.sort()).toEqual(['over tls 1', 'over tls 2', 'over tls 3']);
      expect(relay.messages.map((m) => m.overTls)).toEqual([true, true, true]);
    } finally {
      await transport.onApplicationShutdown();
      await relay.close();
    }
  });
});
