import { registerDecorator, type ValidationArguments } from 'class-validator';
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

const MAX_NAME_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;
const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * What a client may send for a domain: surrounding spaces, upper case, a trailing dot (the absolute
 * form) and Unicode (IDN, stored as its punycode A-label, which is what DNS and DKIM use). Values that
 * are not strings are left for the validator to reject.
 */
export function normalizeDomainName(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  let name = value.trim().toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  // domainToASCII answers '' for what IDNA rejects; the raw text then fails the label check.
  if (/[^\x20-\x7e]/.test(name)) name = domainToASCII(name) || name;
  return name;
}

/** Why a normalized name is not a DNS host name a mail domain can have; null when it is one. */
export function domainNameProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'domain must be a string';
  if (value === '') return 'domain must not be empty';
  if (value.length > MAX_NAME_LENGTH) return `domain must be at most ${MAX_NAME_LENGTH} characters`;
  if (isIP(value) !== 0 || value.startsWith('[')) return 'domain must be a host name, not an IP address';
  const labels = value.split('.');
  if (labels.length < 2) return 'domain must have at least two labels, like example.com';
  if (labels.some((label) => label === '')) return 'domain must not contain empty labels';
  if (labels.some((label) => label.length > MAX_LABEL_LENGTH)) return `domain labels must be at most ${MAX_LABEL_LENGTH} characters`;
  if (!labels.every((label) => LABEL.test(label))) {
    return 'domain labels may only contain letters, digits and hyphens, and must not start or end with a hyphen';
  }
  // An all-numeric top-level label is an IP-like name (e.g. 10.0.0.1.5), never a registrable domain.
  if (/^\d+$/.test(labels[labels.length - 1])) return 'domain must be a host name, not an IP address';
  return null;
}

/** class-validator rule: error code `isDomainName`, the message says what is wrong. */
export function IsDomainName(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isDomainName',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => domainNameProblem(value) === null,
        defaultMessage: (args?: ValidationArguments) => domainNameProblem(args?.value) ?? 'domain is invalid',
      },
    });
}

/**
 * The domain of an email address as stored in `domains.domain` (lower case, A-label), or null when the
 * address has none. Only the exact domain counts: a parent domain does not cover its subdomains.
 */
export function domainOfAddress(email: string): string | null {
  const at = email.lastIndexOf('@');
  if (at < 0) return null;
  const domain = normalizeDomainName(email.slice(at + 1)) as string;
  return domain === '' ? null : domain;
}
