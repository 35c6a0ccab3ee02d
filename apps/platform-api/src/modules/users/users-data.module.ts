import { Module } from '@nestjs/common';
import { UsersRepository } from './users.repository.js';

/**
 * The one writer of `users`, on its own: the auth module (credentials, locale, password resets) and the
 * bootstrap write users too, and the users module imports the auth module, so both import this
 * instead of each other.
 */
@Module({ providers: [UsersRepository], exports: [UsersRepository] })
export class UsersDataModule {}
