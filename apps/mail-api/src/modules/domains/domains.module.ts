import { Module } from '@nestjs/common';

/** Sending domains: DKIM keys, DNS records, verification (now and periodically). */
@Module({})
export class DomainsModule {}
