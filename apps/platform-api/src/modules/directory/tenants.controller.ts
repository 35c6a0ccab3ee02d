import { Body, Controller, Delete, Get, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CreatedIdDto, OkDto } from '../../core/http/common.dto.js';
import { CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { CreateTenantDto, DirectoryListQueryDto, IdQueryDto, UpdateTenantDto } from './directory.dto.js';
import { TenantPageDto } from './directory-responses.dto.js';
import { TenantsService } from './tenants.service.js';

@ApiTags('directory')
@ApiBearerAuth()
@RequireFeatures('directory.tenants.manage')
@Controller('directory/tenants')
export class TenantsController {
  constructor(private readonly tenants: TenantsService) {}

  @Get()
  @ApiOperation({
    summary: 'Lists tenants: {items, total, totalPages, page, pageSize}.',
    description: 'Super administrators see every tenant, anyone else only its own. pageSize defaults to 50, at most 100 (400 above).',
  })
  @ApiOkResponse({ type: TenantPageDto })
  list(@CurrentAuth() auth: AuthContext, @Query() query: DirectoryListQueryDto) {
    return this.tenants.list(auth, query);
  }

  @Post()
  @ApiOperation({ summary: 'Creates a tenant ({name}; 201 {id}); super administrators only (403). No organization is created.' })
  @ApiCreatedResponse({ type: CreatedIdDto })
  create(@CurrentAuth() auth: AuthContext, @Body() body: CreateTenantDto) {
    return this.tenants.create(auth, body);
  }

  @Put()
  @ApiOperation({
    summary: 'Updates a tenant ({id, name?, isActive?}; 200 {ok: true}).',
    description:
      'Non super administrators may rename only their own tenant (another is 404) and may not change isActive (403). Nobody may deactivate their own tenant (400). Deactivation ends every session of the tenant at once, on every instance (its tokens, refresh tokens and session cookies get 401, its event streams close) and refuses logins into it until it is re-activated.',
  })
  @ApiOkResponse({ type: OkDto })
  update(@CurrentAuth() auth: AuthContext, @Body() body: UpdateTenantDto) {
    return this.tenants.update(auth, body);
  }

  @Delete()
  @ApiOperation({
    summary: 'Deletes a tenant (?id=; 200 {ok: true}); super administrators only (403).',
    description:
      '400 while users remain in it, or for the caller’s own tenant; 404 unknown. Its organizations, roles and settings are deleted with it.',
  })
  @ApiOkResponse({ type: OkDto })
  remove(@CurrentAuth() auth: AuthContext, @Query() query: IdQueryDto) {
    return this.tenants.remove(auth, query.id);
  }
}
