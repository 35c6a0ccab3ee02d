import { Module } from '@nestjs/common';
import { DnsModule } from '../../core/dns/dns.module.js';
import { DomainsController } from './domains.controller.js';
import { DomainsJobs } from './domains.jobs.js';
import { DomainsRepository } from './domains.repository.js';
import { DomainsService } from './domains.service.js';

/**
 * Sending domains: DKIM keys, DNS records, verification (now and periodically). The worker imports it
 * too, for the recheck job and `DomainsService.dkimForDomain`; the controller is inert there (no HTTP).
 */
@Module({
  imports: [DnsModule],
  controllers: [DomainsController],
  providers: [DomainsService, DomainsRepository, DomainsJobs],
  exports: [DomainsService],
})
export class DomainsModule {}
