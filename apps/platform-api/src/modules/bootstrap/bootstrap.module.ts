import { Module } from '@nestjs/common';
import { BootstrapAdminService } from './bootstrap-admin.service.js';

@Module({ providers: [BootstrapAdminService], exports: [BootstrapAdminService] })
export class BootstrapModule {}
