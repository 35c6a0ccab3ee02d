import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { AccountEmailModule } from '../account-email/account-email.module.js';
import { AuthController } from './auth.controller.js';
import { AuthJobs } from './auth.jobs.js';
import { AuthService } from './auth.service.js';
import { AuthTokensService } from './auth-tokens.service.js';
import { PasswordResetController } from './password-reset.controller.js';
import { PasswordResetService } from './password-reset.service.js';
import { ProfileService } from './profile.service.js';

@Module({
  imports: [JwtModule.register({}), AccountEmailModule],
  controllers: [AuthController, PasswordResetController],
  providers: [AuthService, ProfileService, AuthTokensService, PasswordResetService, AuthJobs],
  exports: [AuthService, AuthTokensService, PasswordResetService],
})
export class AuthModule {}
