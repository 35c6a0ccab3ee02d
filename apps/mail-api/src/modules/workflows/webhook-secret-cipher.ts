import { Inject, Injectable } from '@nestjs/common';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';

/** Format of a sealed secret: `v1:` + base64(12-byte IV + 16-byte GCM tag + ciphertext). */
const SEALED_PREFIX = 'v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A new workflow's signing secret: shown once, in the create response. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('hex')}`;
}

/**
 * Webhook secrets at rest: AES-256-GCM under MAIL_SECRETS_KEY (as DKIM keys are), bound to the
 * workflow's project and id, so a database dump does not hand out the keys that sign a project's
 * webhooks. The worker opens it to sign; nothing logs it.
 */
@Injectable()
export class WebhookSecretCipher {
  private readonly key: Buffer;

  constructor(@Inject(MAIL_CONFIG) config: Pick<MailConfig, 'secretsKey'>) {
    this.key = config.secretsKey;
  }

  seal(secret: string, owner: { projectId: string; workflowId: string }): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(additionalData(owner));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
  }

  open(stored: string, owner: { projectId: string; workflowId: string }): string {
    if (!stored.startsWith(SEALED_PREFIX)) throw new Error(`the webhook secret of workflow ${owner.workflowId} is in an unknown format`);
    const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES)).setAAD(additionalData(owner));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(
        `the webhook secret of workflow ${owner.workflowId} cannot be decrypted: MAIL_SECRETS_KEY is not the key it was sealed with`,
      );
    }
  }
}

function additionalData(owner: { projectId: string; workflowId: string }): Buffer {
  return Buffer.from(`mail-webhook-secret:v1:${owner.projectId}:${owner.workflowId}`, 'utf8');
}
