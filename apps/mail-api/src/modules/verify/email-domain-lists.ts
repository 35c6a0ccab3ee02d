import { createRequire } from 'node:module';

// The list packages are CommonJS / JSON data: loaded once, at startup, through require.
const require = createRequire(import.meta.url);
const disposablePackage = require('disposable-email-domains-js') as typeof import('disposable-email-domains-js');
/** Free / personal mailbox providers (derhuerst/email-providers, `all.json`: the widely used HubSpot-derived list). */
const personalDomains = require('email-providers/all.json') as string[];

const DISPOSABLE = disposablePackage.disposableEmailBlocklistSet();
const PERSONAL = new Set(personalDomains.map((d) => d.toLowerCase()));

/**
 * Alias / forwarding (relay) services: addresses that hide the real mailbox. No maintained npm package
 * lists these, so they live here; a subdomain of one (e.g. `alias@user.anonaddy.com`) counts too.
 */
const ALIAS_DOMAINS = new Set([
  'duck.com', // DuckDuckGo Email Protection
  'mozmail.com', // Firefox Relay
  'relay.firefox.com',
  'privaterelay.appleid.com', // Sign in with Apple, Hide My Email
  'simplelogin.com', // SimpleLogin (Proton)
  'simplelogin.co',
  'simplelogin.fr',
  'simplelogin.io',
  'aleeas.com',
  'slmail.me',
  'anonaddy.com', // addy.io
  'anonaddy.me',
  'addy.io',
  'passmail.net', // Proton Pass
  'passmail.com',
  'passinbox.com',
  'passfwd.com',
  '33mail.com', // 33mail
  'opayq.com', // Blur / IronVest
]);

/** The domain and each parent with at least two labels: `a.b.example.com` → itself, `b.example.com`, `example.com`. */
function selfAndParents(domain: string): string[] {
  const labels = domain.split('.');
  const names: string[] = [];
  for (let i = 0; i <= labels.length - 2; i += 1) names.push(labels.slice(i).join('.'));
  return names;
}

/** Disposable (throwaway) provider, or a subdomain of one. */
export function isDisposableDomain(domain: string): boolean {
  return selfAndParents(domain).some((name) => DISPOSABLE.has(name));
}

/** A free / personal mailbox provider (exact domain: a subdomain of gmail.com is nobody's mailbox). */
export function isPersonalDomain(domain: string): boolean {
  return PERSONAL.has(domain);
}

export function isAliasDomain(domain: string): boolean {
  return selfAndParents(domain).some((name) => ALIAS_DOMAINS.has(name));
}
