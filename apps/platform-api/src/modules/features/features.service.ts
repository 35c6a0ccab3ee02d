import { Injectable } from '@nestjs/common';
import { MODULE_DECLARATIONS } from '../declarations.js';
import { buildFeatureCatalogue, type FeatureCatalogue } from './feature-catalogue.js';

/** The feature catalogue, built once from the modules' declarations. */
@Injectable()
export class FeaturesService {
  private readonly catalogue: FeatureCatalogue = buildFeatureCatalogue(MODULE_DECLARATIONS);

  featureCatalogue(): FeatureCatalogue {
    return this.catalogue;
  }
}
