import { Module } from '@nestjs/common';

/** Users (/auth/users), invitations (/auth/users/resend-invite) and consents (/auth/users/consents). */
@Module({})
export class UsersModule {}
