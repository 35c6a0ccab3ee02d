/**
 * A redirect target we are willing to send a browser to: a relative path (not `//host`), or an
 * absolute URL on an allowed origin. Anything else is replaced by `fallback`.
 */
export function safeRedirect(target: unknown, allowedOrigins: string[], fallback: string): string {
  if (typeof target !== 'string' || target.length === 0 || target.length > 2048) return fallback;
  if (target.startsWith('/')) {
    if (target.startsWith('//') || target.includes('\\')) return fallback;
    return target;
  }
  try {
    const url = new URL(target);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && allowedOrigins.includes(url.origin)) return url.toString();
  } catch {
    // not a URL
  }
  return fallback;
}
