import { Module } from '@nestjs/common';
import { DnsModule } from '../../core/dns/dns.module.js';
import { DkimKeyCipher } from './dkim-key-cipher.js';
import { DkimKeyEncryption } from './dkim-key-encryption.service.js';
import { DomainsController } from './domains.controller.js';
import { DomainsJobs } from './domains.jobs.js';
import { DomainsRepository } from './domains.repository.js';
import { DomainsService } from './domains.service.js';

/**
 * Sending domains: DKIM keys (encrypted at rest), DNS records, verification (now and periodically). The
 * worker imports it too, for the recheck job and `DomainsService.dkimForDomain`; the controller is inert
 * there (no HTTP). Both seal any legacy plaintext DKIM keys at start (DkimKeyEncryption).
 */
@Module({
  imports: [DnsModule],
  controllers: [DomainsController],
  providers: [DomainsService, DomainsRepository, DomainsJobs, DkimKeyCipher, DkimKeyEncryption],
  exports: [DomainsService],
})
export class DomainsModule {}
