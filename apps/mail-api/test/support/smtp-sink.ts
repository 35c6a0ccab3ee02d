import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';

export interface SinkMessage {
  raw: Buffer;
  /** Date.now() when the sink answered 250 to DATA (the message counts as delivered from then). */
  receivedAt: number;
  /** Date.now() when the client began the transaction (MAIL FROM): when the message was handed over. */
  startedAt: number;
  envelope: { from: string; to: string[] };
  /** The Message-ID header as sent (with angle brackets), or null. */
  messageId: string | null;
  /** Whether the message came over TLS (`tls` option: from the first byte, or after STARTTLS). */
  overTls: boolean;
}

/** How clients reach the sink: plain SMTP (default), TLS from the first byte (`smtps:`), or STARTTLS offered. */
export type SinkTls = 'none' | 'implicit' | 'starttls';

export interface SmtpSink {
  url: string;
  port: number;
  /** Accepted messages, in acceptance order. */
  messages: SinkMessage[];
  /** Date.now() of every MAIL FROM the sink received (every transaction a client started), in order. */
  transactionStarts: number[];
  /** Answers to DATA that were not 250 (a refusal the sink was told to give), with their time. */
  refusals: { code: number; at: number; to?: string[] }[];
  /**
   * Connections opened so far, DATA transfers that reached the end of the message, and DATA answers
   * held right now (`delayNextData`): a client is mid-send while `held` is above zero.
   */
  stats: { connections: number; dataReceived: number; held: number };
  /** The client ports of the transactions whose DATA answer is held now: which process is mid-send. */
  heldClientPorts: Set<number>;
  /**
   * Answer per message (after DATA was read): a refusal `{code, message}` for the recipients, or null to
   * accept. Called for every message until unset (null).
   */
  answerWith(answer: ((to: string[]) => { code: number; message: string } | null) | null): void;
  /** Answer `code` (e.g. 451, 550) to the DATA of the next `count` messages. */
  refuseNext(code: number, count?: number): void;
  /** Hold the answer to the DATA of the next `count` messages for `ms` (the client waits on the open transaction). */
  delayNextData(ms: number, count?: number): void;
  /** Hold the greeting of the next `count` connections for `ms` (the client waits before any SMTP). */
  delayNextConnection(ms: number, count?: number): void;
  parse(message: SinkMessage): Promise<ParsedMail>;
  /** The accepted messages whose Message-ID starts with `<emailId@`. */
  messagesFor(emailIds: string[]): SinkMessage[];
  waitForMessages(predicate: (messages: SinkMessage[]) => boolean, timeoutMs?: number): Promise<SinkMessage[]>;
  close(): Promise<void>;
}

function headerValue(raw: Buffer, name: string): string | null {
  const head = raw.subarray(0, Math.max(0, raw.indexOf('\r\n\r\n')) || raw.length).toString('latin1');
  const match = new RegExp(`^${name}:[ \\t]*(.*(?:\\r\\n[ \\t].*)*)`, 'im').exec(head);
  return match ? match[1].replace(/\r\n[ \t]+/g, ' ').trim() : null;
}

async function readAll(stream: SMTPServerDataStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

interface Plan {
  refuse: { code: number; left: number } | null;
  dataDelay: { ms: number; left: number } | null;
  connectDelay: { ms: number; left: number } | null;
}

function take<T extends { left: number }>(slot: T | null): T | null {
  if (!slot || slot.left <= 0) return null;
  slot.left -= 1;
  return slot;
}

/**
 * A real SMTP server (smtp-server) on 127.0.0.1 and a random port, without authentication, collecting
 * what it accepts; without TLS unless `tls` says otherwise (smtp-server's built-in self-signed
 * certificate). A message counts as delivered only when the sink answers 250 on a connection that is
 * still open: a client killed while its DATA answer was held never delivered.
 */
export async function startSmtpSink(options: { tls?: SinkTls } = {}): Promise<SmtpSink> {
  const tls = options.tls ?? 'none';
  const messages: SinkMessage[] = [];
  const refusals: SmtpSink['refusals'] = [];
  const stats = { connections: 0, dataReceived: 0, held: 0 };
  const heldClientPorts = new Set<number>();
  const plan: Plan = { refuse: null, dataDelay: null, connectDelay: null };
  const transactionStarts = new Map<string, number>();
  const startLog: number[] = [];
  let answer: ((to: string[]) => { code: number; message: string } | null) | null = null;
  const closedSessions = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };

  const server = new SMTPServer({
    secure: tls === 'implicit',
    authOptional: true,
    disabledCommands: tls === 'starttls' ? ['AUTH'] : ['STARTTLS', 'AUTH'],
    logger: false,
    size: 50 * 1024 * 1024,
    closeTimeout: 1000,
    onConnect(_session, callback) {
      stats.connections += 1;
      const delay = take(plan.connectDelay);
      if (delay) later(delay.ms, () => callback());
      else callback();
    },
    onMailFrom(_address, session, callback) {
      transactionStarts.set(session.id, Date.now());
      startLog.push(Date.now());
      callback();
    },
    onClose(session) {
      closedSessions.add(session.id);
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      void readAll(stream).then((raw) => {
        stats.dataReceived += 1;
        const refuse = take(plan.refuse);
        const to = session.envelope.rcptTo.map((r) => r.address);
        const answered = answer?.(to) ?? null;
        const finish = () => {
          if (answered) {
            refusals.push({ code: answered.code, at: Date.now(), to });
            return callback(Object.assign(new Error(answered.message), { responseCode: answered.code }));
          }
          if (refuse) {
            refusals.push({ code: refuse.code, at: Date.now() });
            return callback(
              Object.assign(new Error(refuse.code >= 500 ? 'mailbox unavailable' : 'try again later'), { responseCode: refuse.code }),
            );
          }
          if (!closedSessions.has(session.id)) {
            const envelope = {
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
            };
            messages.push({
              raw,
              receivedAt: Date.now(),
              startedAt: transactionStarts.get(session.id) ?? 0,
              envelope,
              messageId: headerValue(raw, 'Message-ID'),
              overTls: Boolean(session.secure),
            });
          }
          callback(null, `OK queued as sink-${messages.length}`);
        };
        const delay = take(plan.dataDelay);
        if (!delay) return finish();
        stats.held += 1;
        heldClientPorts.add(session.remotePort);
        later(delay.ms, () => {
          stats.held -= 1;
          heldClientPorts.delete(session.remotePort);
          finish();
        });
      }, callback);
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.on('error', () => undefined); // a client killed mid-transaction resets its socket
  const port = (server.server.address() as AddressInfo).port;

  const sink: SmtpSink = {
    url: `${tls === 'implicit' ? 'smtps' : 'smtp'}://127.0.0.1:${port}`,
    port,
    messages,
    transactionStarts: startLog,
    refusals,
    stats,
    heldClientPorts,
    answerWith: (fn) => void (answer = fn),
    refuseNext: (code, count = 1) => void (plan.refuse = { code, left: count }),
    delayNextData: (ms, count = 1) => void (plan.dataDelay = { ms, left: count }),
    delayNextConnection: (ms, count = 1) => void (plan.connectDelay = { ms, left: count }),
    parse: (message) => simpleParser(message.raw),
    messagesFor: (emailIds) => messages.filter((m) => emailIds.some((id) => m.messageId?.startsWith(`<${id}@`))),
    async waitForMessages(predicate, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(messages)) {
        if (Date.now() > deadline) throw new Error(`smtp sink: timed out with ${messages.length} messages`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return messages;
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return sink;
}
