/**
 * Base URLs: an http(s) URL without credentials, query or fragment. `AI_RUNTIME_BASEURL_ALLOWLIST`
 * holds URL prefixes: a base URL matches an entry with the same origin (scheme, host, port) whose path
 * is the base URL's path or one of its parent paths, compared by whole segments.
 */
export function parseBaseUrl(value: string): URL | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password || url.search || url.hash) return null;
  return url;
}

/** The base URL as the SDK is given it: without a trailing slash. */
export function normalizeBaseUrl(url: URL): string {
  return `${url.origin}${trimSlashes(url.pathname)}`;
}

export function baseUrlAllowed(allowlist: readonly string[], candidate: URL): boolean {
  const path = trimSlashes(candidate.pathname);
  return allowlist.some((entry) => {
    const allowed = parseBaseUrl(entry);
    if (!allowed || allowed.origin !== candidate.origin) return false;
    const prefix = trimSlashes(allowed.pathname);
    return prefix === '' || path === prefix || path.startsWith(`${prefix}/`);
  });
}

/** Without trailing slashes (a loop, not a regex: the input is the caller's). */
function trimSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path[end - 1] === '/') end -= 1;
  return path.slice(0, end);
}
