import { Body, Get, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ClientIp, CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { ApiErrors, AuthAdminController } from '../../core/http/admin-controller.decorators.js';
import { ConsentListDto, ConsentRecordDto, ConsentsQuery, CreateConsentDto } from './user-consents.dto.js';
import { UserConsentsService } from './user-consents.service.js';

@AuthAdminController(
  'auth/users/consents',
  ApiErrors({
    403: 'Missing auth.users.edit, or the user is outside the caller’s organizations.',
    400: 'Invalid user id or payload.',
    404: '`{error: "user not found"}` (not in the caller’s tenant).',
  }),
)
export class UserConsentsController {
  constructor(private readonly consents: UserConsentsService) {}

  @Get()
  @RequireFeatures('auth.users.edit')
  @ApiOperation({
    summary: 'The user’s consent records, newest first, each with its integrity status.',
    description:
      '`integrityValid` recomputes the HMAC-SHA256 of the record and compares it with `integrityHash` in constant time; ' +
      'false means the stored row was changed outside the API.',
  })
  @ApiOkResponse({ type: ConsentListDto })
  list(@CurrentAuth() auth: AuthContext, @Query() query: ConsentsQuery) {
    return this.consents.list(auth, query.userId);
  }

  @Post()
  @RequireFeatures('auth.users.edit')
  @ApiOperation({
    summary: 'Records a consent given or withdrawn (an addition: the spec lists no endpoint that writes consents).',
    description:
      'Append-only: a withdrawal is a new record with `isGranted: false`. `ipAddress` is the client’s IP; `grantedAt` ' +
      '(given) or `withdrawnAt` (withdrawn) is the time of the request. Recorded in the action log (command ' +
      '`auth.users.consents.create`) but not undoable: the consent log is append-only.',
  })
  @ApiCreatedResponse({ type: ConsentRecordDto })
  record(@CurrentAuth() auth: AuthContext, @Body() body: CreateConsentDto, @ClientIp() ip: string) {
    return this.consents.record(auth, body, ip);
  }
}
