import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Reset and invitation emails are sent by the worker, from a BullMQ job that names only the token
 * row: Redis (queues, job data, job history) must never hold a working link. Postgres keeps only a
 * hash of each token for redemption, so the worker needs another way back to the raw token. It is
 * kept in the row sealed with AES-256-GCM under a key derived (HKDF-SHA256) from AUTH_JWT_SECRET,
 * with the row id as associated data (a sealed value copied to another row does not open), and the
 * sealed value is erased once the email is delivered.
 *
 * Why sealed rather than derived (e.g. HMAC(secret, row id)): a derived token could be recomputed
 * for as long as the secret lives, from ids that also travel through Redis; a sealed one is gone once
 * erased. Either way reading it needs both the database and the secret, and whoever holds
 * AUTH_JWT_SECRET can already sign access tokens, so the key adds no new secret to guard.
 */
const KEY_INFO = 'platform-api auth_tokens sealed link v1';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class TokenSealer {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), KEY_INFO, 32));
  }

  seal(rowId: string, token: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(rowId, 'utf8'));
    const sealed = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')}`;
  }

  /** The token, or null when the value was not sealed for this row under this key. */
  open(rowId: string, value: string): string | null {
    const [version, body] = value.split('.');
    if (version !== VERSION || !body) return null;
    const bytes = Buffer.from(body, 'base64url');
    if (bytes.length <= IV_BYTES + TAG_BYTES) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(rowId, 'utf8'));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
