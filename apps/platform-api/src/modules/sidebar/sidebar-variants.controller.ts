import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { CreateSidebarVariantDto, SIDEBAR_MANAGE_FEATURE } from './sidebar.dto.js';
import { SidebarVariantCreatedDto, SidebarVariantListDto } from './sidebar-responses.dto.js';
import { SidebarVariantsService } from './sidebar-variants.service.js';
import { ReturnsUndoTokens } from '../../core/audit/undo-token.js';

@ApiTags('auth')
@ApiBearerAuth()
@ReturnsUndoTokens()
@Controller('auth/sidebar/variants')
export class SidebarVariantsController {
  constructor(private readonly variants: SidebarVariantsService) {}

  @Get()
  @ApiOperation({ summary: 'The caller’s named sidebar variants for its tenant and locale, oldest first.' })
  @ApiOkResponse({ type: SidebarVariantListDto })
  listVariants(@CurrentAuth() auth: AuthContext) {
    return this.variants.list(auth);
  }

  @Post()
  @HttpCode(200)
  @RequireFeatures(SIDEBAR_MANAGE_FEATURE)
  @ApiOperation({
    summary: 'Creates a sidebar variant.',
    description:
      'A blank or omitted name gets the lowest free of "My preferences", "My preferences 2", ...; an explicit name ' +
      'already used by the caller (tenant + locale) is 409 with code duplicate_name. isActive: true deactivates the ' +
      'caller’s other variants in the same transaction. Command `auth.sidebar.variants.create`, with `X-Undo-Token`: ' +
      'undo deletes the variant and re-activates the one it deactivated.',
  })
  @ApiOkResponse({ type: SidebarVariantCreatedDto })
  createVariant(@CurrentAuth() auth: AuthContext, @Body() body: CreateSidebarVariantDto) {
    return this.variants.create(auth, body);
  }
}
