import { Module } from '@nestjs/common';

/** Sidebar preferences and variants (/auth/sidebar/*). */
@Module({})
export class SidebarModule {}
