import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../../config/platform-config.js';

const KEY_INFO = 'platform-api ai provider keys v1';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The settings row a key belongs to: bound into the ciphertext, so a sealed key copied elsewhere does not open. */
export interface ProviderKeyOwner {
  tenantId: string;
  agentId: string | null;
  /** The row's base URL (null: the deployment's): the key is only ever sent there. */
  baseURL: string | null;
}

/**
 * Provider keys a tenant stores with its own base URL (PUT /ai_assistant/settings `apiKey`), at rest:
 * AES-256-GCM under a key derived (HKDF-SHA256) from AUTH_JWT_SECRET, as the auth module seals its
 * tokens (token-sealing.ts), with the tenant, the agent row and the base URL as associated data. A
 * database dump alone does not give the keys out, and a key never opens for another URL. Rotating
 * AUTH_JWT_SECRET makes stored keys unreadable: runs then send none (logged), and the tenant enters
 * its key again.
 */
@Injectable()
export class ProviderKeyCipher {
  private readonly logger = new Logger(ProviderKeyCipher.name);
  private readonly key: Buffer;

  constructor(@Inject(PLATFORM_CONFIG) config: Pick<PlatformConfig, 'jwtSecret'>) {
    this.key = Buffer.from(hkdfSync('sha256', Buffer.from(config.jwtSecret, 'utf8'), Buffer.alloc(0), KEY_INFO, 32));
  }

  seal(apiKey: string, owner: ProviderKeyOwner): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(additionalData(owner));
    const sealed = Buffer.concat([cipher.update(apiKey, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')}`;
  }

  /** The key, or null (logged) when it was sealed under another secret or for another row or URL. */
  open(stored: string, owner: ProviderKeyOwner): string | null {
    const [version, body] = stored.split('.');
    const bytes = Buffer.from(body ?? '', 'base64url');
    if (version === VERSION && bytes.length > IV_BYTES + TAG_BYTES) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES)).setAAD(additionalData(owner));
        decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        // Falls through to the warning.
      }
    }
    this.logger.warn({ tenantId: owner.tenantId, agentId: owner.agentId }, 'stored AI provider key cannot be opened; none is sent');
    return null;
  }
}

function additionalData(owner: ProviderKeyOwner): Buffer {
  return Buffer.from(JSON.stringify(['ai-provider-key', VERSION, owner.tenantId, owner.agentId, owner.baseURL]), 'utf8');
}
