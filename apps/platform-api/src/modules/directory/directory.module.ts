import { Module } from '@nestjs/common';
import { DirectoryLookupController } from './directory-lookup.controller.js';
import { DirectoryLookupService } from './directory-lookup.service.js';
import { OrganizationsController } from './organizations.controller.js';
import { OrganizationsService } from './organizations.service.js';
import { TenantsController } from './tenants.controller.js';
import { TenantsRepository } from './tenants.repository.js';
import { TenantsService } from './tenants.service.js';

/** Directory lookups and management (/directory/*). */
@Module({
  controllers: [DirectoryLookupController, TenantsController, OrganizationsController],
  providers: [DirectoryLookupService, TenantsService, TenantsRepository, OrganizationsService],
})
export class DirectoryModule {}
