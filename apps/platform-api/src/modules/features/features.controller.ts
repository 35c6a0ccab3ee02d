import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireFeatures } from '../../core/auth/auth.decorators.js';
import { FeatureCatalogueDto } from './features.dto.js';
import { FeaturesService } from './features.service.js';

@ApiTags('auth')
@ApiBearerAuth()
@Controller('auth/features')
export class FeaturesController {
  constructor(private readonly catalogue: FeaturesService) {}

  @Get()
  @RequireFeatures('auth.acl.manage')
  @ApiOperation({
    summary: 'Feature catalogue: every feature declared by a module ({items: [{id, title, module}], modules: [{id, title}]}).',
  })
  @ApiOkResponse({ type: FeatureCatalogueDto })
  features() {
    return this.catalogue.featureCatalogue();
  }
}
