import net from 'node:net';

/** The connection options nodemailer's pool hands its `getSocket` hook (the URL's, then MailTransport's). */
export interface RelayConnectOptions {
  host?: string;
  port?: number | string;
  secure?: boolean;
  connectionTimeout?: number;
}

type RelaySocketCallback = (err: Error | null, socketOptions?: { connection: net.Socket }) => void;

/**
 * Opens a pooled SMTP connection with Nagle's algorithm off (TCP_NODELAY), for nodemailer's `getSocket` hook.
 *
 * nodemailer connects with Nagle on and writes a message as several small writes (the commands, then the
 * DATA in chunks). With Nagle each small write waits until the relay has acknowledged the one before, and
 * relays delay their ACKs (40 ms on Linux): about 50 ms per message per connection however fast the relay is,
 * 166 emails/s over 8 connections to a local sink against 1,000 to 2,000 with Nagle off. nodemailer has no
 * option for it; given a connected socket by this hook it uses it as its own (TLS on top for smtps:, STARTTLS
 * as usual, its greeting and socket timeouts).
 */
export function connectToRelay(options: RelayConnectOptions, callback: RelaySocketCallback): void {
  // nodemailer's own defaults when the URL names no host or port (SMTPConnection).
  const host = options.host || 'localhost';
  const port = Number(options.port) || (options.secure ? 465 : 587);
  const socket = net.connect({ host, port, noDelay: true, keepAlive: true });
  const fail = (err: Error) => {
    socket.destroy();
    callback(err);
  };
  socket.setTimeout(options.connectionTimeout ?? 15_000, () =>
    fail(Object.assign(new Error(`Connection timeout to ${host}:${port}`), { code: 'ETIMEDOUT' })),
  );
  socket.once('error', fail);
  socket.once('connect', () => {
    socket.setTimeout(0);
    socket.removeListener('error', fail);
    socket.removeAllListeners('timeout');
    callback(null, { connection: socket });
  });
}
