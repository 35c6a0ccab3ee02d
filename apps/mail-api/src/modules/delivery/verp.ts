import { Inject, Injectable } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';

const LOCAL_PREFIX = 'bounces+';
/** 80 bits of HMAC-SHA256: far beyond guessing, and keeps the local part within RFC 5321's 64 characters. */
const MAC_BYTES = 10;
const TOKEN = /^[0-9a-f]{52}$/;

/**
 * VERP envelope senders (decisions.md "Deliverability"): `bounces+<token>@<MAIL_BOUNCE_DOMAIN>`,
 * where the token is lowercase hex of the email id and a truncated HMAC-SHA256 under MAIL_LINK_SECRET
 * (hex, not base64: some MTAs fold the case of local parts). A report sent back to that address names
 * the email, and nobody without the secret can make one that does.
 */
@Injectable()
export class Verp {
  constructor(@Inject(MAIL_CONFIG) private readonly config: MailConfig) {}

  get enabled(): boolean {
    return this.config.deliverability.bounceDomain !== null;
  }

  /** The envelope sender of an email, or null when MAIL_BOUNCE_DOMAIN is unset (the from address is used). */
  returnPathFor(emailId: string): string | null {
    const domain = this.config.deliverability.bounceDomain;
    if (!domain) return null;
    const id = Buffer.from(emailId.replace(/-/g, ''), 'hex');
    return `${LOCAL_PREFIX}${id.toString('hex')}${this.mac(id).toString('hex')}@${domain}`;
  }

  /** The email id a recipient address was made for, or null (another domain, forged or malformed). */
  emailIdOf(address: string): string | null {
    const domain = this.config.deliverability.bounceDomain;
    if (!domain || address.length > 254) return null;
    const at = address.lastIndexOf('@');
    if (at < 0 || address.slice(at + 1).toLowerCase() !== domain) return null;
    const local = address.slice(0, at).toLowerCase();
    if (!local.startsWith(LOCAL_PREFIX)) return null;
    const token = local.slice(LOCAL_PREFIX.length);
    if (!TOKEN.test(token)) return null;
    const id = Buffer.from(token.slice(0, 32), 'hex');
    if (!timingSafeEqual(Buffer.from(token.slice(32), 'hex'), this.mac(id))) return null;
    const hex = id.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  private mac(id: Buffer): Buffer {
    // Domain-separated from the unsubscribe and tracking links signed with the same secret.
    return createHmac('sha256', this.config.linkSecret).update('mail-verp:v1:').update(id).digest().subarray(0, MAC_BYTES);
  }
}
