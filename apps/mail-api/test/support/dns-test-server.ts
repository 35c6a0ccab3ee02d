import dns2 from 'dns2';

const { Packet } = dns2;

/** Records of one test zone; a name absent from the zone set answers NXDOMAIN. */
export interface TestZone {
  ns?: string[];
  mx?: { exchange: string; priority: number }[];
  a?: string[];
  aaaa?: string[];
  /** Never answer (the client's lookup times out). */
  silent?: boolean;
}

export interface DnsTestServer {
  /** `127.0.0.1:<port>`, for MAIL_DNS_SERVERS. */
  address: string;
  /** Queries received, as `TYPE name` strings. */
  queries: string[];
  close(): Promise<void>;
}

const TYPE_NAMES: Record<number, string> = { [Packet.TYPE.NS]: 'NS', [Packet.TYPE.MX]: 'MX', [Packet.TYPE.A]: 'A', [Packet.TYPE.AAAA]: 'AAAA' };

/**
 * A real DNS server (dns2, UDP on 127.0.0.1, a random port) answering authoritatively from `zones`:
 * NOERROR with the records of the asked type (possibly none: NODATA), NXDOMAIN for unknown names.
 */
export async function startDnsTestServer(zones: Record<string, TestZone>): Promise<DnsTestServer> {
  const queries: string[] = [];
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
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
      if (question.type === Packet.TYPE.NS) for (const ns of zone.ns ?? []) response.answers.push({ ...base, type: Packet.TYPE.NS, ns } as never);
      if (question.type === Packet.TYPE.MX) for (const mx of zone.mx ?? []) response.answers.push({ ...base, type: Packet.TYPE.MX, ...mx } as never);
      if (question.type === Packet.TYPE.A) for (const address of zone.a ?? []) response.answers.push({ ...base, type: Packet.TYPE.A, address } as never);
      if (question.type === Packet.TYPE.AAAA) for (const address of zone.aaaa ?? []) response.answers.push({ ...base, type: Packet.TYPE.AAAA, address } as never);
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  return {
    address: `127.0.0.1:${addresses.udp?.port}`,
    queries,
    close: () => server.close(),
  };
}
