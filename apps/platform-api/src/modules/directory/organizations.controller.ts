import { Body, Controller, Delete, Get, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CreatedIdDto, OkDto } from '../../core/http/common.dto.js';
import { CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { CreateOrganizationDto, IdQueryDto, OrganizationListQueryDto, UpdateOrganizationDto } from './directory.dto.js';
import { OrganizationPageDto } from './directory-responses.dto.js';
import { OrganizationsService } from './organizations.service.js';

const SCOPE =
  'Scoped to the caller’s tenant (super administrators: all tenants); another tenant’s organization is 404, one outside ' +
  'the caller’s organization restriction 403 (and absent from the list).';

@ApiTags('directory')
@ApiBearerAuth()
@RequireFeatures('directory.organizations.manage')
@Controller('directory/organizations')
export class OrganizationsController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Get()
  @ApiOperation({ summary: 'Lists organizations: {items, total, totalPages, page, pageSize}; pageSize at most 100.', description: SCOPE })
  @ApiOkResponse({ type: OrganizationPageDto })
  list(@CurrentAuth() auth: AuthContext, @Query() query: OrganizationListQueryDto) {
    return this.organizations.list(auth, query);
  }

  @Post()
  @ApiOperation({
    summary: 'Creates an organization ({name, slug?, tenantId?}; 201 {id}).',
    description:
      'Slugs are globally unique. Omitted: derived from the name (lowercase ASCII, dashes) with the lowest free -2, -3, ... ' +
      'suffix. Given and already taken: 400. tenantId defaults to the caller’s; another tenant needs a super administrator (403), unknown 404.',
  })
  @ApiCreatedResponse({ type: CreatedIdDto })
  create(@CurrentAuth() auth: AuthContext, @Body() body: CreateOrganizationDto) {
    return this.organizations.create(auth, body);
  }

  @Put()
  @ApiOperation({
    summary: 'Updates an organization ({id, name?, slug?, isActive?}; 200 {ok: true}); a taken slug is 400.',
    description: SCOPE,
  })
  @ApiOkResponse({ type: OkDto })
  update(@CurrentAuth() auth: AuthContext, @Body() body: UpdateOrganizationDto) {
    return this.organizations.update(auth, body);
  }

  @Delete()
  @ApiOperation({ summary: 'Deletes an organization (?id=; 200 {ok: true}); 400 while users still belong to it.', description: SCOPE })
  @ApiOkResponse({ type: OkDto })
  remove(@CurrentAuth() auth: AuthContext, @Query() query: IdQueryDto) {
    return this.organizations.remove(auth, query.id);
  }
}
