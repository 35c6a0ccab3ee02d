import { Module } from '@nestjs/common';

/** Roles, role ACLs and user ACLs (/auth/roles*, /auth/users/acl). */
@Module({})
export class AccessControlModule {}
