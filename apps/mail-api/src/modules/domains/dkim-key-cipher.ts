import { Inject, Injectable } from '@nestjs/common';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';

/** Format of a sealed key: `v1:` + base64(12-byte IV + 16-byte GCM tag + ciphertext). */
export const SEALED_DKIM_KEY_PREFIX = 'v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const PLAINTEXT_PEM = /^-----BEGIN [A-Z ]*PRIVATE KEY-----/;

/** The row a key belongs to: bound into the ciphertext, so a sealed key copied onto another domain does not open. */
export interface DkimKeyOwner {
  projectId: string;
  domain: string;
}

export function isSealedDkimKey(stored: string): boolean {
  return stored.startsWith(SEALED_DKIM_KEY_PREFIX);
}

/**
 * DKIM private keys at rest: AES-256-GCM under `MAIL_SECRETS_KEY`, so a database dump or backup does not
 * hand out the keys that sign the projects' mail. The version prefix keeps sealed and legacy plaintext
 * rows apart without guessing; legacy rows (written before encryption, or by an older instance during a
 * rolling deploy) are still read, and sealed at the next start (DkimKeyEncryption).
 */
@Injectable()
export class DkimKeyCipher {
  private readonly key: Buffer;

  constructor(@Inject(MAIL_CONFIG) config: Pick<MailConfig, 'secretsKey'>) {
    if (config.secretsKey.length !== 32) throw new Error('the DKIM key cipher needs a 32-byte MAIL_SECRETS_KEY');
    this.key = config.secretsKey;
  }

  seal(privateKeyPem: string, owner: DkimKeyOwner): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(additionalData(owner));
    const ciphertext = Buffer.concat([cipher.update(privateKeyPem, 'utf8'), cipher.final()]);
    return SEALED_DKIM_KEY_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
  }

  /** The PEM of a stored key. Throws when it was sealed under another key or for another row, or is neither format. */
  open(stored: string, owner: DkimKeyOwner): string {
    if (!isSealedDkimKey(stored)) {
      if (PLAINTEXT_PEM.test(stored)) return stored;
      throw new Error(`the DKIM key of ${owner.domain} is in an unknown format`);
    }
    const raw = Buffer.from(stored.slice(SEALED_DKIM_KEY_PREFIX.length), 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES)).setAAD(additionalData(owner));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`the DKIM key of ${owner.domain} cannot be decrypted: MAIL_SECRETS_KEY is not the key it was sealed with`);
    }
  }
}

function additionalData(owner: DkimKeyOwner): Buffer {
  return Buffer.from(`mail-dkim-key:v1:${owner.projectId}:${owner.domain}`, 'utf8');
}
