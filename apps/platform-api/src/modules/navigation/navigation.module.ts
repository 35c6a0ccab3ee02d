import { Module } from '@nestjs/common';
import { NavigationController } from './navigation.controller.js';
import { NavigationService } from './navigation.service.js';

/** Backend chrome (/auth/admin/nav), built from the module declarations. */
@Module({
  controllers: [NavigationController],
  providers: [NavigationService],
})
export class NavigationModule {}
