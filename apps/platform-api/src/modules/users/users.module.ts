import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { UserConsentsController } from './user-consents.controller.js';
import { UserConsentsService } from './user-consents.service.js';
import { UsersController } from './users.controller.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

/** Users (/auth/users), invitations (/auth/users/resend-invite) and consents (/auth/users/consents). */
@Module({
  imports: [AuthModule],
  controllers: [UsersController, UserConsentsController],
  providers: [UsersService, UsersRepository, UserConsentsService],
  exports: [UsersService],
})
export class UsersModule {}
