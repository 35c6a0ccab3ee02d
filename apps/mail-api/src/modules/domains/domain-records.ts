import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { MailDomainStatus } from '@app/contracts';
import type { DnsOutcome } from '../../core/dns/dns-lookup.service.js';

/**
 * The two TXT records a domain publishes, and how a DNS answer is judged against them (pure: no I/O
 * besides key generation).
 *
 * - Ownership: `_mail-verification.<domain>` TXT `mail-verification=<32 hex>`. A fixed underscore label
 *   (like `_dmarc`) keeps it off the apex, where SPF and other providers' tokens already crowd.
 * - DKIM: `<selector>._domainkey.<domain>` TXT `v=DKIM1; k=rsa; p=<base64 SPKI DER>`, RSA 2048.
 */
export const OWNERSHIP_LABEL = '_mail-verification';
const TOKEN_PREFIX = 'mail-verification=';

const generateKeyPairAsync = promisify(generateKeyPair);

export interface DkimKeys {
  selector: string;
  /** PKCS#8 PEM, what nodemailer's DKIM signer takes. */
  privateKeyPem: string;
  /** Base64 of the SPKI DER: the `p=` tag. */
  publicKeyBase64: string;
}

/** A fresh RSA 2048 key pair (off the event loop) and a random selector, so a re-added domain never reuses a published key. */
export async function generateDkimKeys(): Promise<DkimKeys> {
  const { publicKey, privateKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { selector: `mail${randomBytes(4).toString('hex')}`, privateKeyPem: privateKey, publicKeyBase64: publicKey.toString('base64') };
}

export function newVerificationToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(16).toString('hex')}`;
}

export function ownershipRecordName(domain: string): string {
  return `${OWNERSHIP_LABEL}.${domain}`;
}

export function dkimRecordName(selector: string, domain: string): string {
  return `${selector}._domainkey.${domain}`;
}

export function dkimRecordValue(publicKeyBase64: string): string {
  return `v=DKIM1; k=rsa; p=${publicKeyBase64}`;
}

/** What one lookup says about one record. `failed`: the DNS gave no usable answer, so nothing is known. */
export type RecordCheck = { state: 'found' } | { state: 'missing' } | { state: 'wrong' } | { state: 'failed'; code: string };

/** Some DNS control panels store the quotes users paste; a value wrapped in them still counts. */
function unquoted(value: string): string {
  const trimmed = value.trim();
  return trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1).trim() : trimmed;
}

function judge(outcome: DnsOutcome, matches: (record: string) => boolean): RecordCheck {
  if (outcome.kind === 'failed') return { state: 'failed', code: outcome.code };
  if (outcome.kind !== 'found') return { state: 'missing' };
  return outcome.records.some((record) => matches(unquoted(record))) ? { state: 'found' } : { state: 'wrong' };
}

export function checkOwnership(outcome: DnsOutcome, token: string): RecordCheck {
  return judge(outcome, (record) => record === token);
}

/**
 * The `p=` of a DKIM key record (RFC 6376 §3.6.1): tags separated by `;`, whitespace allowed anywhere
 * in the base64. Null when it is not an RSA DKIM1 record.
 */
export function dkimPublicKeyOf(record: string): string | null {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, ''));
  }
  if (tags.has('v') && tags.get('v') !== 'DKIM1') return null;
  if (tags.has('k') && tags.get('k')?.toLowerCase() !== 'rsa') return null;
  return tags.get('p') || null;
}

export function checkDkim(outcome: DnsOutcome, publicKeyBase64: string): RecordCheck {
  return judge(outcome, (record) => dkimPublicKeyOf(record) === publicKeyBase64);
}

export interface DomainCheckResult {
  status: MailDomainStatus;
  ownershipFound: boolean;
  dkimFound: boolean;
  failureReasons: string[];
}

function reason(check: RecordCheck, name: string, wrong: string): string | null {
  switch (check.state) {
    case 'found':
      return null;
    case 'missing':
      return `TXT record ${name} not found`;
    case 'wrong':
      return `TXT record ${name} found, but ${wrong}`;
    case 'failed':
      return `DNS lookup of TXT ${name} failed (${check.code}); the check will be retried`;
  }
}

const isDefinitelyBad = (check: RecordCheck) => check.state === 'missing' || check.state === 'wrong';

/**
 * The status after a check:
 * - both records found: VERIFIED;
 * - an already VERIFIED domain stays VERIFIED while its DKIM record still matches (or cannot be looked
 *   up right now): ownership was proven once, and removing the token afterwards is common. A DKIM record
 *   that is gone or different makes it FAILED, so mail stops being signed with a key nobody publishes;
 * - otherwise a record that is missing or wrong makes it FAILED;
 * - when the only problems are DNS failures, nothing is known: the status stays (PENDING stays PENDING).
 */
export function decideStatus(
  current: MailDomainStatus,
  ownership: RecordCheck,
  dkim: RecordCheck,
  names: { ownership: string; dkim: string },
): DomainCheckResult {
  const failureReasons = [
    reason(ownership, names.ownership, 'none of its values is the verification token'),
    reason(dkim, names.dkim, "it does not publish this domain's DKIM public key (p=)"),
  ].filter((line): line is string => line !== null);
  const ownershipFound = ownership.state === 'found';
  const dkimFound = dkim.state === 'found';
  let status: MailDomainStatus;
  if (ownershipFound && dkimFound) status = 'VERIFIED';
  else if (current === 'VERIFIED') status = isDefinitelyBad(dkim) ? 'FAILED' : 'VERIFIED';
  else if (isDefinitelyBad(ownership) || isDefinitelyBad(dkim)) status = 'FAILED';
  else status = current;
  return { status, ownershipFound, dkimFound, failureReasons };
}
