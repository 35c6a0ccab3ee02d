import { Module } from '@nestjs/common';
import { DnsLookup } from './dns-lookup.service.js';

/** DNS through the configured resolvers (`MAIL_DNS_SERVERS`), for /v1/verify and domain verification. */
@Module({ providers: [DnsLookup], exports: [DnsLookup] })
export class DnsModule {}
