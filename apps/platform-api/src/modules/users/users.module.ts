import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { DirectoryModule } from '../directory/directory.module.js';
import { RolesModule } from '../roles/roles.module.js';
import { ConsentSnapshots } from './consent-snapshot.js';
import { InvitationsService } from './invitations.service.js';
import { UserAclController } from './user-acl.controller.js';
import { UserAclRepository } from './user-acl.repository.js';
import { UserAclService } from './user-acl.service.js';
import { UserAclSnapshots } from './user-acl-snapshot.js';
import { UserConsentsController } from './user-consents.controller.js';
import { UserConsentsRepository } from './user-consents.repository.js';
import { UserConsentsService } from './user-consents.service.js';
import { UserDeletionService } from './user-deletion.service.js';
import { UserSnapshots } from './user-snapshot.js';
import { UsersDataModule } from './users-data.module.js';
import { UsersController } from './users.controller.js';
import { UsersService } from './users.service.js';

/**
 * Users (/auth/users), their invitations (/auth/users/resend-invite), custom ACLs (/auth/users/acl)
 * and consents (/auth/users/consents). Owns `users` (through UsersDataModule, which the auth module
 * imports too), `user_acls` and `user_consents`; writes memberships, sessions and tokens through the
 * roles and auth modules' repositories.
 */
@Module({
  imports: [UsersDataModule, AuthModule, RolesModule, DirectoryModule],
  controllers: [UsersController, UserAclController, UserConsentsController],
  providers: [
    UsersService,
    InvitationsService,
    UserSnapshots,
    UserDeletionService,
    UserAclService,
    UserAclRepository,
    UserAclSnapshots,
    UserConsentsService,
    UserConsentsRepository,
    ConsentSnapshots,
  ],
  exports: [UsersService],
})
export class UsersModule {}
