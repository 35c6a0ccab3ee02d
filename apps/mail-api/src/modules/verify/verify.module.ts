import { Module } from '@nestjs/common';
import { DnsModule } from '../../core/dns/dns.module.js';
import { VerifyController } from './verify.controller.js';
import { VerifyService } from './verify.service.js';

@Module({ imports: [DnsModule], controllers: [VerifyController], providers: [VerifyService] })
export class VerifyModule {}
