import { timingSafeEqual, createHash } from 'node:crypto';
import type { Request } from 'express';
import { ErrorCode } from '@app/contracts';
import { DomainError } from '@app/service-kit';

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const BASIC = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i;
/** Browsers ask for the token with their own password dialog (user name: anything). */
const CHALLENGE = 'Basic realm="mail-api queue dashboard", charset="UTF-8"';

/** The credential a request presents: a bearer token, or the password of HTTP Basic authentication. */
function presented(header: string | undefined): string | null {
  if (!header) return null;
  const bearer = BEARER.exec(header);
  if (bearer) return bearer[1];
  const basic = BASIC.exec(header);
  if (!basic) return null;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? null : decoded.slice(colon + 1);
}

/** Hashes first, so the comparison takes the same time whatever the lengths. */
function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/**
 * The operator pages of the mail-api (the queue dashboard) need `MAIL_ADMIN_TOKEN`, as
 * `Authorization: Bearer <token>` or as the password of HTTP Basic authentication; anything else is
 * 401 UNAUTHORIZED with a Basic challenge. Project keys never open them.
 */
export function requireAdminToken(adminToken: string): (req: Request) => void {
  return (req) => {
    const token = presented(req.headers.authorization);
    if (token !== null && sameSecret(token, adminToken)) return;
    throw new DomainError(
      ErrorCode.Unauthorized,
      'the queue dashboard needs MAIL_ADMIN_TOKEN (Bearer, or the password of Basic authentication)',
      {
        status: 401,
        headers: { 'WWW-Authenticate': CHALLENGE },
      },
    );
  };
}
