import { Inject, Injectable } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';

/** 16 bytes of HMAC-SHA256, as unsubscribe links: far beyond guessing, and short links. */
const MAC_BYTES = 16;
const UUID_BYTES = 16;
const IDS_BYTES = 2 * UUID_BYTES;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TOKEN = /^[A-Za-z0-9_-]+$/;
/**
 * Longer links (in UTF-8 bytes) are left as they are (not tracked): a link of kilobytes is rarely a link
 * a person clicks, and a tracked link's clicks are indexed by its URL (a btree entry holds about 2.7 KB).
 */
export const MAX_TRACKED_URL_BYTES = 2048;

export const OPEN_PATH = '/t/o/';
export const CLICK_PATH = '/t/c/';

export interface TrackedEmail {
  projectId: string;
  emailId: string;
}

export interface TrackedClick extends TrackedEmail {
  url: string;
}

const uuidBytes = (uuid: string): Buffer => Buffer.from(uuid.replace(/-/g, ''), 'hex');

function uuidOf(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A token's bytes, only in its canonical encoding (base64url decoding ignores stray characters). */
function decode(token: string, minBytes: number): Buffer | null {
  if (!TOKEN.test(token)) return null;
  const raw = Buffer.from(token, 'base64url');
  if (raw.length < minBytes || raw.toString('base64url') !== token) return null;
  return raw;
}

/**
 * Signed, stateless engagement links of one email: the open pixel `/t/o/<token>` and click redirects
 * `/t/c/<token>`. A token is base64url(project id + email id + truncated HMAC-SHA256 under
 * MAIL_LINK_SECRET [+ the URL's UTF-8 bytes, for a click]). The click MAC covers the URL, so only URLs
 * that were in the email redirect (never an open redirect), and each kind of token is domain-separated
 * from the other and from unsubscribe links.
 */
@Injectable()
export class TrackingLinks {
  constructor(@Inject(MAIL_CONFIG) private readonly config: MailConfig) {}

  openUrl(email: TrackedEmail): string {
    const ids = idsOf(email);
    return `${this.config.publicUrl}${OPEN_PATH}${Buffer.concat([ids, this.mac('open', ids)]).toString('base64url')}`;
  }

  clickUrl(email: TrackedEmail, url: string): string {
    const ids = idsOf(email);
    const target = Buffer.from(url, 'utf8');
    return `${this.config.publicUrl}${CLICK_PATH}${Buffer.concat([ids, this.mac('click', ids, target), target]).toString('base64url')}`;
  }

  /** Links of this service that must keep working untracked (unsubscribe) or are tracking already. */
  isOwnLink(url: string): boolean {
    return url.startsWith(`${this.config.publicUrl}/`);
  }

  verifyOpen(token: string): TrackedEmail | null {
    const raw = decode(token, IDS_BYTES + MAC_BYTES);
    if (!raw || raw.length !== IDS_BYTES + MAC_BYTES) return null;
    const ids = raw.subarray(0, IDS_BYTES);
    return timingSafeEqual(raw.subarray(IDS_BYTES), this.mac('open', ids)) ? emailOf(ids) : null;
  }

  verifyClick(token: string): TrackedClick | null {
    const raw = decode(token, IDS_BYTES + MAC_BYTES + 1);
    if (!raw) return null;
    const ids = raw.subarray(0, IDS_BYTES);
    const target = raw.subarray(IDS_BYTES + MAC_BYTES);
    if (!timingSafeEqual(raw.subarray(IDS_BYTES, IDS_BYTES + MAC_BYTES), this.mac('click', ids, target))) return null;
    return { ...emailOf(ids), url: target.toString('utf8') };
  }

  private mac(kind: 'open' | 'click', ids: Buffer, target?: Buffer): Buffer {
    const hmac = createHmac('sha256', this.config.linkSecret).update(`mail-${kind}:v1:`).update(ids);
    if (target) hmac.update(target);
    return hmac.digest().subarray(0, MAC_BYTES);
  }
}

function idsOf(email: TrackedEmail): Buffer {
  if (!UUID.test(email.projectId) || !UUID.test(email.emailId)) throw new Error('tracking links need uuid ids');
  return Buffer.concat([uuidBytes(email.projectId), uuidBytes(email.emailId)]);
}

function emailOf(ids: Buffer): TrackedEmail {
  return { projectId: uuidOf(ids.subarray(0, UUID_BYTES)), emailId: uuidOf(ids.subarray(UUID_BYTES)) };
}
