import { expect } from '@jest/globals';
import request from 'supertest';
import type { MailDnsRecord, MailDomain } from '@app/contracts';
import type { DnsTestServer } from './dns-test-server.js';
import { bearer } from './mail-api-helpers.js';
import type { MailTestApp } from './mail-test-app.js';

/** DNS character-strings hold at most 255 bytes: longer TXT values are published split, as DNS providers do. */
export function txtStrings(value: string, size = 255): string[] {
  const strings: string[] = [];
  for (let i = 0; i < value.length; i += size) strings.push(value.slice(i, i + size));
  return strings.length > 0 ? strings : [''];
}

/** Adds the records to the running test server's zones (each record name becomes a zone answering its TXT). */
export function publishRecords(dns: DnsTestServer, records: MailDnsRecord[]): void {
  for (const record of records) {
    const zone = (dns.zones[record.name] ??= {});
    zone.txt = [...(zone.txt ?? []), txtStrings(record.value)];
  }
}

/**
 * Adds `domain` to the project of `secretKey` and makes it VERIFIED, through the real API:
 * POST /domains, publish the two returned TXT records into `dns` (the dns2 test server the app resolves
 * through: start the app with `env: { MAIL_DNS_SERVERS: dns.address }`), POST /domains/{id}/verify.
 * Answers the verified domain; fails the test when any step does not answer as expected.
 *
 *   const dns = await startDnsTestServer({});
 *   const t = await startMailApp({ env: { MAIL_DNS_SERVERS: dns.address } });
 *   await addVerifiedDomain(t, dns, project.secretKey, 'example.com');
 *   // now `from: 'hello@example.com'` may send
 */
export async function addVerifiedDomain(t: MailTestApp, dns: DnsTestServer, secretKey: string, domain: string): Promise<MailDomain> {
  const created = await request(t.url).post('/domains').set(bearer(secretKey)).send({ domain });
  expect({ status: created.status, body: created.body }).toEqual({ status: 201, body: expect.objectContaining({ status: 'PENDING' }) });
  publishRecords(dns, (created.body as MailDomain).records);
  const verified = await request(t.url).post(`/domains/${created.body.id}/verify`).set(bearer(secretKey));
  expect({ status: verified.status, body: verified.body }).toEqual({
    status: 200,
    body: expect.objectContaining({ status: 'VERIFIED', verified: true }),
  });
  return verified.body as MailDomain;
}
