import { Module } from '@nestjs/common';
import { DnsLookup } from './dns-lookup.service.js';
import { VerifyController } from './verify.controller.js';
import { VerifyService } from './verify.service.js';

@Module({ controllers: [VerifyController], providers: [VerifyService, DnsLookup] })
export class VerifyModule {}
