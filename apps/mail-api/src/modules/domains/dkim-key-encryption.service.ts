import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DkimKeyCipher } from './dkim-key-cipher.js';
import { DomainsRepository } from './domains.repository.js';

const BATCH_SIZE = 500;

/**
 * Seals, at start, the DKIM keys stored in plaintext before keys were encrypted at rest. A step of the
 * start rather than a migration because it needs `MAIL_SECRETS_KEY`, which migrations do not read.
 * Idempotent and safe with several instances starting at once (see `sealPlaintextKeys`).
 */
@Injectable()
export class DkimKeyEncryption implements OnApplicationBootstrap {
  private readonly logger = new Logger(DkimKeyEncryption.name);

  constructor(
    private readonly domains: DomainsRepository,
    private readonly cipher: DkimKeyCipher,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const sealed = await this.sealPlaintextKeys();
    if (sealed > 0) this.logger.log({ sealed }, 'encrypted plaintext DKIM private keys');
  }

  sealPlaintextKeys(): Promise<number> {
    return this.domains.sealPlaintextKeys(
      (row) => this.cipher.seal(row.dkim_private_key, { projectId: row.project_id, domain: row.domain }),
      BATCH_SIZE,
    );
  }
}
