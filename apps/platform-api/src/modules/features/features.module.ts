import { Module } from '@nestjs/common';
import { FeaturesController } from './features.controller.js';
import { FeaturesService } from './features.service.js';

/** The feature catalogue (/auth/features), built from the module declarations. */
@Module({
  controllers: [FeaturesController],
  providers: [FeaturesService],
})
export class FeaturesModule {}
