import { timingSafeEqual, createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request } from 'express';
import { ErrorCode } from '@app/contracts';
import { DomainError, type QueueDashboardAccess, type QueueDashboardWrite } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';

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

/** Names a token in logs without revealing it: the first 16 hex characters of its SHA-256. */
export function tokenFingerprint(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 16);
}

/**
 * The operator pages of the mail-api (the queue dashboard) need `MAIL_ADMIN_TOKEN` or
 * `MAIL_ADMIN_WRITE_TOKEN`, as `Authorization: Bearer <token>` or as the password of HTTP Basic
 * authentication; anything else is 401 UNAUTHORIZED with a Basic challenge. Project keys never open
 * them. `MAIL_ADMIN_TOKEN` reads only; `MAIL_ADMIN_WRITE_TOKEN` may also retry, promote and clean,
 * and every such write is one log line with the token's fingerprint (never the token).
 */
@Injectable()
export class MailQueueDashboardAccess implements QueueDashboardAccess {
  private readonly logger = new Logger('QueueDashboard');

  constructor(@Inject(MAIL_CONFIG) private readonly config: MailConfig) {}

  private token(req: Request): string | null {
    return presented(req.headers.authorization);
  }

  private isWriter(token: string | null): token is string {
    return token !== null && this.config.adminWriteToken !== null && sameSecret(token, this.config.adminWriteToken);
  }

  authorize(req: Request): void {
    const token = this.token(req);
    const reader = token !== null && this.config.adminToken !== null && sameSecret(token, this.config.adminToken);
    if (reader || this.isWriter(token)) return;
    throw new DomainError(
      ErrorCode.Unauthorized,
      'the queue dashboard needs MAIL_ADMIN_TOKEN (Bearer, or the password of Basic authentication)',
      { status: 401, headers: { 'WWW-Authenticate': CHALLENGE } },
    );
  }

  canWrite(req: Request): boolean {
    return this.isWriter(this.token(req));
  }

  recordWrite(req: Request, write: QueueDashboardWrite): Promise<void> {
    const token = this.token(req);
    this.logger.log({ ...write, tokenFingerprint: token ? tokenFingerprint(token) : null }, `queue dashboard write: ${write.action}`);
    return Promise.resolve();
  }
}
