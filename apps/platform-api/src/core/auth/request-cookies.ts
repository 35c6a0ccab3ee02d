import { parse as parseCookies } from 'cookie';
import type { Request } from 'express';

/** One cookie of the request, parsed on demand (no cookie middleware on every route). */
export function readCookie(req: Request, name: string): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  return parseCookies(header)[name] ?? null;
}
