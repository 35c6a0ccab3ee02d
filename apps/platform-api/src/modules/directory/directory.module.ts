import { Module } from '@nestjs/common';
import { AttachmentCleanupModule } from '../attachments/attachment-cleanup.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { DirectoryLookupController } from './directory-lookup.controller.js';
import { DirectoryLookupService } from './directory-lookup.service.js';
import { OrganizationsController } from './organizations.controller.js';
import { OrganizationsRepository } from './organizations.repository.js';
import { OrganizationsService } from './organizations.service.js';
import { TenantsController } from './tenants.controller.js';
import { TenantsRepository } from './tenants.repository.js';
import { TenantsService } from './tenants.service.js';

/**
 * Directory lookups and management (/directory/*). Owns `tenants` and `organizations`: their
 * repositories are exported for the modules that check against them or write them (the bootstrap).
 * Imports the auth module for its SessionsRepository (a tenant's deactivation ends its sessions), and
 * the attachments' cleanup (a tenant's delete has its stored bytes removed).
 */
@Module({
  imports: [AuthModule, AttachmentCleanupModule],
  controllers: [DirectoryLookupController, TenantsController, OrganizationsController],
  providers: [DirectoryLookupService, TenantsService, TenantsRepository, OrganizationsService, OrganizationsRepository],
  exports: [TenantsRepository, OrganizationsRepository],
})
export class DirectoryModule {}
