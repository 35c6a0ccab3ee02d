import { Inject, Injectable } from '@nestjs/common';
import { Resolver } from 'node:dns/promises';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';

/** Per query attempt; each configured server gets one attempt. */
export const DNS_TIMEOUT_MS = 2000;
/** Answers (including "no such records") are reused this long; failures are not cached. */
export const DNS_CACHE_TTL_MS = 5 * 60_000;
const MAX_CACHE_ENTRIES = 10_000;

export type DnsRecordType = 'NS' | 'MX' | 'A' | 'AAAA' | 'TXT';

export interface DnsLookupOptions {
  /**
   * Ask the resolvers now, neither reading nor filling the cache: domain verification must see a record
   * the user published a moment ago.
   */
  fresh?: boolean;
}

/**
 * found: records exist; none: the name exists without records of this type (NODATA); nxdomain: the
 * name does not exist; failed: no usable answer (timeout, SERVFAIL, refused), so nothing is known.
 */
export type DnsOutcome = { kind: 'found'; records: string[] } | { kind: 'none' } | { kind: 'nxdomain' } | { kind: 'failed'; code: string };

interface CacheEntry {
  expiresAt: number;
  outcome: Promise<DnsOutcome>;
}

/**
 * DNS lookups (/v1/verify and sending-domain checks) through the resolvers of `MAIL_DNS_SERVERS` (the
 * system's when unset), and never anything else: no fallback to other servers. Answers are cached in
 * process (concurrent lookups of one name share one query) unless the caller asks for a fresh answer.
 */
@Injectable()
export class DnsLookup {
  private readonly resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: 1 });
  private readonly cache = new Map<string, CacheEntry>();

  constructor(@Inject(MAIL_CONFIG) config: MailConfig) {
    if (config.dnsServers.length > 0) this.resolver.setServers(config.dnsServers);
  }

  /** TXT records come back one string per record, its character-strings joined (RFC 7208 §3.3, RFC 6376 §3.6.2.2). */
  lookup(type: DnsRecordType, name: string, options: DnsLookupOptions = {}): Promise<DnsOutcome> {
    if (options.fresh) return this.query(type, name);
    const key = `${type} ${name}`;
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > Date.now()) return cached.outcome;
    const outcome = this.query(type, name);
    if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { expiresAt: Date.now() + DNS_CACHE_TTL_MS, outcome });
    void outcome.then((o) => {
      if (o.kind === 'failed' && this.cache.get(key)?.outcome === outcome) this.cache.delete(key);
    });
    return outcome;
  }

  private async query(type: DnsRecordType, name: string): Promise<DnsOutcome> {
    try {
      const records = await this.resolve(type, name);
      return records.length > 0 ? { kind: 'found', records } : { kind: 'none' };
    } catch (error) {
      const code = (error as { code?: string }).code ?? 'EUNKNOWN';
      if (code === 'ENODATA') return { kind: 'none' };
      if (code === 'ENOTFOUND') return { kind: 'nxdomain' };
      return { kind: 'failed', code };
    }
  }

  private async resolve(type: DnsRecordType, name: string): Promise<string[]> {
    switch (type) {
      case 'NS':
        return this.resolver.resolveNs(name);
      case 'MX':
        // A "null MX" (RFC 7505: `MX 0 .`) says the domain accepts no mail: it counts as no MX.
        return (await this.resolver.resolveMx(name)).map((mx) => mx.exchange).filter((host) => host !== '' && host !== '.');
      case 'A':
        return this.resolver.resolve4(name);
      case 'AAAA':
        return this.resolver.resolve6(name);
      case 'TXT':
        return (await this.resolver.resolveTxt(name)).map((strings) => strings.join(''));
    }
  }
}
