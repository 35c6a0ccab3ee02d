import { Injectable } from '@nestjs/common';
import { isEmail } from 'class-validator';
import { createRequire } from 'node:module';
import { domainToASCII } from 'node:url';
import type { MailVerificationResult } from '@app/contracts';
import { DnsLookup, type DnsOutcome } from '../../core/dns/dns-lookup.service.js';
import { isAliasDomain, isDisposableDomain, isPersonalDomain } from './email-domain-lists.js';

const require = createRequire(import.meta.url);
const spellChecker = require('@zootools/email-spell-checker') as typeof import('@zootools/email-spell-checker');

const MAX_ADDRESS_LENGTH = 254;

/** The `reasons` texts, one per negative finding. */
export const VerifyReason = {
  invalidSyntax: 'invalid email address syntax',
  disposable: 'the domain is a disposable (throwaway) email provider',
  personal: 'the address is at a personal (free) email provider, not an organization domain',
  alias: 'the address is at an email alias / forwarding service',
  plusAddressed: 'the address is plus-addressed (a tag on another mailbox)',
  typo: (suggestion: string) => `possible typo: did you mean ${suggestion}?`,
  noDomain: 'the domain does not exist (no NS records)',
  noMx: 'the domain has no MX records, so it cannot receive email',
  noWebsite: 'the domain has no website (no A or AAAA records)',
  dnsFailed: (what: string, code: string) => `could not look up the ${what} records of the domain (${code})`,
} as const;

interface ParsedAddress {
  local: string;
  /** Lower-case, IDNA (punycode) form: what DNS and the lists know. */
  domain: string;
}

function parseAddress(email: string): ParsedAddress | null {
  if (email.length > MAX_ADDRESS_LENGTH) return null;
  if (!isEmail(email, { allow_display_name: false, require_tld: true, allow_ip_domain: false, allow_utf8_local_part: true })) {
    return null;
  }
  const at = email.lastIndexOf('@');
  const domain = domainToASCII(email.slice(at + 1).toLowerCase());
  return domain ? { local: email.slice(0, at), domain } : null;
}

/**
 * POST /v1/verify (decisions.md "Mail"), checks in this order: syntax (a failure ends the checks);
 * disposable, personal-provider and alias domain (bundled lists); plus addressing; typo (suggestion,
 * never invalidating); NS (the domain exists: without it `valid` is false and nothing more is looked
 * up); MX (without it `valid` is false); A/AAAA (`hasWebsite`). `valid` means "can receive email":
 * syntax, domain and MX. Every negative finding adds a reason; a good address has none.
 */
@Injectable()
export class VerifyService {
  constructor(private readonly dns: DnsLookup) {}

  async verify(input: string): Promise<MailVerificationResult> {
    const email = input.trim();
    const address = parseAddress(email);
    if (!address) return result(email, { reasons: [VerifyReason.invalidSyntax] });
    const { local, domain } = address;
    const reasons: string[] = [];
    const isDisposable = isDisposableDomain(domain);
    if (isDisposable) reasons.push(VerifyReason.disposable);
    const isPersonalEmail = isPersonalDomain(domain);
    if (isPersonalEmail) reasons.push(VerifyReason.personal);
    const isAlias = isAliasDomain(domain);
    if (isAlias) reasons.push(VerifyReason.alias);
    const isPlusAddressed = local.indexOf('+') > 0;
    if (isPlusAddressed) reasons.push(VerifyReason.plusAddressed);
    const suggestion = typoSuggestion(local, domain);
    if (suggestion) reasons.push(VerifyReason.typo(suggestion));
    const flags = { isDisposable, isAlias, isTypo: suggestion !== null, isPlusAddressed, isPersonalEmail };

    const domainExists = await this.domainExists(domain, reasons);
    if (!domainExists) return result(email, { ...flags, reasons, suggestion });
    const [mx, a, aaaa] = await Promise.all([this.dns.lookup('MX', domain), this.dns.lookup('A', domain), this.dns.lookup('AAAA', domain)]);
    const hasMxRecords = mx.kind === 'found';
    if (!hasMxRecords) reasons.push(mx.kind === 'failed' ? VerifyReason.dnsFailed('MX', mx.code) : VerifyReason.noMx);
    const hasWebsite = a.kind === 'found' || aaaa.kind === 'found';
    if (!hasWebsite) reasons.push(VerifyReason.noWebsite);
    return result(email, { ...flags, valid: hasMxRecords, domainExists, hasWebsite, hasMxRecords, reasons, suggestion });
  }

  /**
   * NS records at the domain, or, when the name exists without them (a host inside a zone, e.g.
   * `mail.example.com`), at its nearest parent with at least two labels.
   */
  private async domainExists(domain: string, reasons: string[]): Promise<boolean> {
    let name = domain;
    for (;;) {
      const ns: DnsOutcome = await this.dns.lookup('NS', name);
      if (ns.kind === 'found') return true;
      if (ns.kind === 'failed') {
        reasons.push(VerifyReason.dnsFailed('NS', ns.code));
        return false;
      }
      const parent = name.slice(name.indexOf('.') + 1);
      if (ns.kind === 'nxdomain' || !parent.includes('.')) {
        reasons.push(VerifyReason.noDomain);
        return false;
      }
      name = parent;
    }
  }
}

/** A corrected address from the bundled spell checker, or null. */
function typoSuggestion(local: string, domain: string): string | null {
  const suggested = spellChecker.run({ email: `${local}@${domain}` });
  return suggested && suggested.domain !== domain ? suggested.full : null;
}

/** The result in the documented field order; unspecified checks are false. */
function result(
  email: string,
  found: Partial<Omit<MailVerificationResult, 'email' | 'suggestion'>> & { reasons: string[]; suggestion?: string | null },
): MailVerificationResult {
  return {
    email,
    valid: found.valid ?? false,
    isDisposable: found.isDisposable ?? false,
    isAlias: found.isAlias ?? false,
    isTypo: found.isTypo ?? false,
    isPlusAddressed: found.isPlusAddressed ?? false,
    isPersonalEmail: found.isPersonalEmail ?? false,
    domainExists: found.domainExists ?? false,
    hasWebsite: found.hasWebsite ?? false,
    hasMxRecords: found.hasMxRecords ?? false,
    reasons: found.reasons,
    ...(found.suggestion ? { suggestion: found.suggestion } : {}),
  };
}
