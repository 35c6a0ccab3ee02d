import { Module } from '@nestjs/common';

/** Feature catalogue (/auth/features) and backend chrome (/auth/admin/nav), built from the module declarations. */
@Module({})
export class NavigationModule {}
