import { Module } from '@nestjs/common';
import { SidebarController } from './sidebar.controller.js';
import { SidebarPreferencesService } from './sidebar-preferences.service.js';
import { SidebarRepository } from './sidebar.repository.js';
import { SidebarVariantsService } from './sidebar-variants.service.js';

/** Sidebar preferences and variants (/auth/sidebar/*). */
@Module({
  controllers: [SidebarController],
  providers: [SidebarRepository, SidebarPreferencesService, SidebarVariantsService],
})
export class SidebarModule {}
