import { Controller, Get, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ClientIp, Public } from '../../core/auth/auth.decorators.js';
import { OkFalseExceptionFilter } from '../../core/errors/platform-exception.filter.js';
import { OrganizationLookupDto, TenantLookupDto } from './directory-responses.dto.js';
import { DirectoryLookupService } from './directory-lookup.service.js';

const LIMITS =
  'Public. Failures are {ok: false, error}: 400 for a missing or malformed parameter, 404 for an unknown or inactive ' +
  'record. Both lookups share a limit of 60 requests per minute per client IP (429 {error} with Retry-After).';

@ApiTags('directory')
@Controller('directory')
export class DirectoryLookupController {
  constructor(private readonly lookups: DirectoryLookupService) {}

  @Get('tenants/lookup')
  @Public()
  @UseFilters(OkFalseExceptionFilter)
  @ApiQuery({ name: 'tenantId', required: true, description: 'UUID' })
  @ApiOperation({ summary: 'Resolves an active tenant by id: {ok: true, tenant: {id, name}}.', description: LIMITS })
  @ApiOkResponse({ type: TenantLookupDto })
  tenant(@Query('tenantId') tenantId: unknown, @ClientIp() ip: string) {
    return this.lookups.tenant(ip, tenantId);
  }

  @Get('organizations/lookup')
  @Public()
  @UseFilters(OkFalseExceptionFilter)
  @ApiQuery({ name: 'slug', required: true, description: '^[a-z0-9][a-z0-9-]{0,62}$' })
  @ApiOperation({ summary: 'Resolves an active organization by slug: {ok: true, organization: {id, name, slug}}.', description: LIMITS })
  @ApiOkResponse({ type: OrganizationLookupDto })
  organization(@Query('slug') slug: unknown, @ClientIp() ip: string) {
    return this.lookups.organization(ip, slug);
  }
}
