import { Module } from '@nestjs/common';
import { DirectoryModule } from '../directory/directory.module.js';
import { RolesModule } from '../roles/roles.module.js';
import { UsersDataModule } from '../users/users-data.module.js';
import { BootstrapAdminService } from './bootstrap-admin.service.js';
import { BootstrapRepository } from './bootstrap.repository.js';

/** The first administrator (decisions.md "platform bootstrap"), written through the owning repositories. */
@Module({
  imports: [DirectoryModule, RolesModule, UsersDataModule],
  providers: [BootstrapAdminService, BootstrapRepository],
  exports: [BootstrapAdminService],
})
export class BootstrapModule {}
