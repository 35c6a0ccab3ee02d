import dns2, { type DnsHandler } from 'dns2';
import type { Socket } from 'node:net';

const { Packet } = dns2;

/** Records of one test zone; a name absent from the zone set answers NXDOMAIN. */
export interface TestZone {
  ns?: string[];
  mx?: { exchange: string; priority: number }[];
  a?: string[];
  aaaa?: string[];
  /**
   * TXT records, each one or more character-strings (at most 255 bytes each on the wire: a longer value
   * must be split, as DNS providers do).
   */
  txt?: string[][];
  /** Never answer (the client's lookup times out). */
  silent?: boolean;
}

export interface DnsTestServer {
  /** `127.0.0.1:<port>`, for MAIL_DNS_SERVERS. */
  address: string;
  /** The zones it answers from: the object given at start, read on every query, so tests can edit it. */
  zones: Record<string, TestZone>;
  /** Queries received, as `TYPE name` strings. */
  queries: string[];
  close(): Promise<void>;
}

const TYPE_NAMES: Record<number, string> = {
  [Packet.TYPE.NS]: 'NS',
  [Packet.TYPE.MX]: 'MX',
  [Packet.TYPE.A]: 'A',
  [Packet.TYPE.AAAA]: 'AAAA',
  [Packet.TYPE.TXT]: 'TXT',
};

/**
 * A real DNS server (dns2, on 127.0.0.1, a random port) answering authoritatively from `zones`:
 * NOERROR with the records of the asked type (possibly none: NODATA), NXDOMAIN for unknown names.
 * UDP and TCP share the port: an answer over 512 bytes (a 2048-bit DKIM key next to other TXT records)
 * is truncated over UDP and the resolver retries over TCP, as with a real server.
 */
export async function startDnsTestServer(zones: Record<string, TestZone>): Promise<DnsTestServer> {
  const queries: string[] = [];
  const handle: DnsHandler = (request, send) => {
    const [question] = request.questions;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    const type = TYPE_NAMES[question.type] ?? String(question.type);
    queries.push(`${type} ${name}`);
    const zone = zones[name];
    if (zone?.silent) return;
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    if (!zone) {
      response.header.rcode = 3; // NXDOMAIN
      void send(response);
      return;
    }
    const base = { name: question.name, class: Packet.CLASS.IN, ttl: 300 };
    if (question.type === Packet.TYPE.NS)
      for (const ns of zone.ns ?? []) response.answers.push({ ...base, type: Packet.TYPE.NS, ns } as never);
    if (question.type === Packet.TYPE.MX)
      for (const mx of zone.mx ?? []) response.answers.push({ ...base, type: Packet.TYPE.MX, ...mx } as never);
    if (question.type === Packet.TYPE.A)
      for (const address of zone.a ?? []) response.answers.push({ ...base, type: Packet.TYPE.A, address } as never);
    if (question.type === Packet.TYPE.AAAA)
      for (const address of zone.aaaa ?? []) response.answers.push({ ...base, type: Packet.TYPE.AAAA, address } as never);
    if (question.type === Packet.TYPE.TXT)
      for (const data of zone.txt ?? []) response.answers.push({ ...base, type: Packet.TYPE.TXT, data } as never);
    void send(response);
  };
  // The UDP port is chosen by the kernel; the same number may already be taken for TCP (by any
  // socket of the machine, e.g. an outgoing connection's ephemeral port): then try another one.
  for (let attempt = 1; ; attempt++) {
    const udp = dns2.createUDPServer(handle);
    await udp.listen(0, '127.0.0.1');
    const port = udp.address().port;
    const tcp = dns2.createTCPServer(handle);
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, '127.0.0.1', () => resolve());
      });
    } catch (err) {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < 10) continue;
      throw err;
    }
    return serverOn(port, udp, tcp, zones, queries);
  }
}

function serverOn(
  port: number,
  udp: ReturnType<typeof dns2.createUDPServer>,
  tcp: ReturnType<typeof dns2.createTCPServer>,
  zones: Record<string, TestZone>,
  queries: string[],
): DnsTestServer {
  // Resolvers may keep a TCP connection open; close() ends them instead of waiting for their idle timeout.
  const sockets = new Set<Socket>();
  tcp.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    address: `127.0.0.1:${port}`,
    zones,
    queries,
    close: async () => {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
