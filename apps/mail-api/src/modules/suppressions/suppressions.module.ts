import { Module } from '@nestjs/common';
import { SuppressionsController } from './suppressions.controller.js';
import { SuppressionsRepository } from './suppressions.repository.js';
import { SuppressionsService } from './suppressions.service.js';

/**
 * The suppression list API (`/suppressions`). `SuppressionsRepository` is the one writer of the table:
 * delivery adds hard bounces and complaints through it.
 */
@Module({
  controllers: [SuppressionsController],
  providers: [SuppressionsService, SuppressionsRepository],
  exports: [SuppressionsRepository],
})
export class SuppressionsModule {}
