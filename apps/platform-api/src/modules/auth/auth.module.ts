import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { AccountEmailModule } from '../account-email/account-email.module.js';
import { UsersDataModule } from '../users/users-data.module.js';
import { AccountsRepository } from './accounts.repository.js';
import { AuthController } from './auth.controller.js';
import { AuthJobs } from './auth.jobs.js';
import { AuthService } from './auth.service.js';
import { AuthTokensRepository } from './auth-tokens.repository.js';
import { AuthTokensService } from './auth-tokens.service.js';
import { FeatureCheckFastPath } from './feature-check-fast-path.js';
import { PasswordResetController } from './password-reset.controller.js';
import { PasswordResetService } from './password-reset.service.js';
import { ProfileService } from './profile.service.js';
import { SessionsRepository } from './sessions.repository.js';
import { TokenLinkEmails } from './token-link-emails.js';

/**
 * Logins, sessions, password resets, the caller's own profile (/auth/login, /auth/session/*,
 * /auth/reset*, /auth/profile, /auth/locale, /auth/feature-check). Owns `sessions` and `auth_tokens`:
 * their repositories are exported for the modules that end sessions or void tokens.
 */
@Module({
  imports: [JwtModule.register({}), AccountEmailModule, UsersDataModule],
  controllers: [AuthController, PasswordResetController],
  providers: [
    AuthService,
    ProfileService,
    AuthTokensService,
    PasswordResetService,
    AuthJobs,
    AccountsRepository,
    SessionsRepository,
    AuthTokensRepository,
    TokenLinkEmails,
  ],
  exports: [AuthService, AuthTokensService, PasswordResetService, SessionsRepository, AuthTokensRepository],
})
export class AuthModule implements NestModule {
  /** Nest builds the middleware's own instance from this module's providers. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(FeatureCheckFastPath).forRoutes({ path: 'auth/feature-check', method: RequestMethod.POST });
  }
}
