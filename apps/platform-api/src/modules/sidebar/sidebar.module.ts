import { Module } from '@nestjs/common';
import { SidebarPreferencesController } from './sidebar-preferences.controller.js';
import { SidebarPreferencesService } from './sidebar-preferences.service.js';
import { SidebarRepository } from './sidebar.repository.js';
import { SidebarVariantsController } from './sidebar-variants.controller.js';
import { SidebarVariantsService } from './sidebar-variants.service.js';

/** Sidebar preferences and variants (/auth/sidebar/*). */
@Module({
  controllers: [SidebarPreferencesController, SidebarVariantsController],
  providers: [SidebarRepository, SidebarPreferencesService, SidebarVariantsService],
})
export class SidebarModule {}
