import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentAuth } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { AdminNavDto } from './navigation.dto.js';
import { NavigationService } from './navigation.service.js';

@ApiTags('auth')
@ApiBearerAuth()
@Controller('auth/admin/nav')
export class NavigationController {
  constructor(private readonly navigation: NavigationService) {}

  @Get()
  @ApiOperation({
    summary: 'Backend chrome: navigation filtered by the caller’s features.',
    description:
      'Items whose required features the caller lacks are left out, and groups or sections left empty are dropped ' +
      '(super administrators see everything). `settingsPathPrefixes` / `profilePathPrefixes`: per visible section, the ' +
      'longest common path of its visible items’ hrefs (the hrefs themselves when that path has fewer than two ' +
      'segments), deduplicated, prefixes covered by another dropped. `grantedFeatures`: the caller’s features as ' +
      'granted (wildcards kept), `["*"]` for super administrators; `roles`: role names. The payload is not ' +
      'personalised by sidebar preferences: clients apply GET /auth/sidebar/preferences themselves.',
  })
  @ApiOkResponse({ type: AdminNavDto })
  adminNav(@CurrentAuth() auth: AuthContext) {
    return this.navigation.adminNav(auth);
  }
}
