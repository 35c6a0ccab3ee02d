/**
 * Control characters (C0, DEL, C1) and backslashes are refused anywhere in a target: browsers drop
 * tabs and line breaks from URLs and read `\` as `/`, so `/\t/evil.example` or `/\evil.example`
 * would be followed as `//evil.example`, another host.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is this pattern's purpose
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\\]/;

/** Stands for this site while resolving a relative target (never emitted). */
const THIS_SITE = 'http://this-site.invalid';

/**
 * A redirect target we are willing to send a browser to: a path on this site (not `//host`), or an
 * absolute http(s) URL on an allowed origin. Anything else is replaced by `fallback`.
 */
export function safeRedirect(target: unknown, allowedOrigins: string[], fallback: string): string {
  if (typeof target !== 'string' || target.length === 0 || target.length > 2048) return fallback;
  if (UNSAFE_CHARACTERS.test(target)) return fallback;
  if (target.startsWith('/')) {
    if (target.startsWith('//')) return fallback;
    // Resolved the way a browser would: it must stay on this site.
    return sameSite(target) ? target : fallback;
  }
  try {
    const url = new URL(target);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && allowedOrigins.includes(url.origin)) return url.toString();
  } catch {
    // not a URL
  }
  return fallback;
}

function sameSite(path: string): boolean {
  try {
    return new URL(path, THIS_SITE).origin === THIS_SITE;
  } catch {
    return false;
  }
}
