import { Inject, Injectable } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';

/** 16 bytes of HMAC-SHA256: 128 bits is far beyond guessing, and keeps the link short. */
const MAC_BYTES = 16;
const UUID_BYTES = 16;
const TOKEN_BYTES = 2 * UUID_BYTES + MAC_BYTES;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface UnsubscribeTarget {
  projectId: string;
  contactId: string;
}

const uuidBytes = (uuid: string): Buffer => Buffer.from(uuid.replace(/-/g, ''), 'hex');

function uuidOf(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Signed, stateless unsubscribe links: the token is base64url(project id bytes + contact id bytes +
 * truncated HMAC-SHA256 under MAIL_LINK_SECRET). Nothing is stored per email, a link never expires
 * (RFC 8058 wants it to keep working), and rotating the secret invalidates every link ever sent.
 */
@Injectable()
export class UnsubscribeLinks {
  constructor(@Inject(MAIL_CONFIG) private readonly config: MailConfig) {}

  urlFor(projectId: string, contactId: string): string {
    return `${this.config.publicUrl}/unsubscribe/${this.tokenFor(projectId, contactId)}`;
  }

  tokenFor(projectId: string, contactId: string): string {
    if (!UUID.test(projectId) || !UUID.test(contactId)) throw new Error('unsubscribe links need uuid ids');
    const ids = Buffer.concat([uuidBytes(projectId), uuidBytes(contactId)]);
    return Buffer.concat([ids, this.mac(ids)]).toString('base64url');
  }

  /** The (project, contact) a token was made for, or null when it was not made with our secret. */
  verify(token: string): UnsubscribeTarget | null {
    if (!/^[A-Za-z0-9_-]+$/.test(token)) return null;
    const raw = Buffer.from(token, 'base64url');
    // Canonical encoding only: base64url decoding ignores stray trailing characters.
    if (raw.length !== TOKEN_BYTES || raw.toString('base64url') !== token) return null;
    const ids = raw.subarray(0, 2 * UUID_BYTES);
    if (!timingSafeEqual(raw.subarray(2 * UUID_BYTES), this.mac(ids))) return null;
    return { projectId: uuidOf(ids.subarray(0, UUID_BYTES)), contactId: uuidOf(ids.subarray(UUID_BYTES)) };
  }

  private mac(ids: Buffer): Buffer {
    // Domain-separated, so this key's MACs cannot be replayed as another kind of signed token.
    return createHmac('sha256', this.config.linkSecret).update('mail-unsubscribe:v1:').update(ids).digest().subarray(0, MAC_BYTES);
  }
}
