import { Module } from '@nestjs/common';

/** Directory lookups and management (/directory/*). */
@Module({})
export class DirectoryModule {}
