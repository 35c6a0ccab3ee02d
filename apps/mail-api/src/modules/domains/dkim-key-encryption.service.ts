import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';
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
    private readonly dataSource: DataSource,
    private readonly domains: DomainsRepository,
    private readonly cipher: DkimKeyCipher,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const sealed = await this.sealPlaintextKeys();
    if (sealed > 0) this.logger.log({ sealed }, 'encrypted plaintext DKIM private keys');
  }

  /**
   * Replaces plaintext DKIM keys by sealed ones, BATCH_SIZE rows per transaction, under an advisory
   * lock; rows already sealed are never touched, so a repeat (or a second instance) changes nothing.
   * Answers how many rows it sealed.
   */
  async sealPlaintextKeys(): Promise<number> {
    let sealed = 0;
    for (;;) {
      const count = await this.dataSource.transaction(async (tx) => {
        await this.domains.lockKeySealing(tx);
        const rows = await this.domains.plaintextKeys(tx, BATCH_SIZE);
        if (rows.length === 0) return 0;
        const keys = rows.map((row) => ({
          id: row.id,
          key: this.cipher.seal(row.dkim_private_key, { projectId: row.project_id, domain: row.domain }),
        }));
        await this.domains.storeSealedKeys(tx, keys);
        return rows.length;
      });
      sealed += count;
      if (count < BATCH_SIZE) return sealed;
    }
  }
}
