import { Body, Controller, Delete, Get, Headers, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ClientIp, CurrentAuth, RequireFeatures } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { CreatedIdDto, ErrorDto, OkDto } from '../../core/http/common.dto.js';
import { CreateUserDto, ListUsersQuery, ResendInviteDto, UpdateUserDto, UserIdQuery, UserListDto } from './users.dto.js';
import { InvitationsService } from './invitations.service.js';
import { UsersService } from './users.service.js';
import { ReturnsUndoTokens } from '../../core/audit/undo-token.js';

@ApiTags('auth')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'No valid token.' })
@ApiForbiddenResponse({
  type: ErrorDto,
  description: 'Missing feature, or outside the caller’s tenant scope, organizations or grant boundary.',
})
@ReturnsUndoTokens()
@Controller('auth/users')
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly invitations: InvitationsService,
  ) {}

  @Get()
  @RequireFeatures('auth.users.list')
  @ApiOperation({
    summary: 'Lists users (deleted users excluded), ordered by email.',
    description:
      'Non-super-administrators see their own tenant only, and when restricted to organizations only the users of those ' +
      'organizations. Super administrators see every tenant unless `tenantId` narrows it.',
  })
  @ApiOkResponse({ type: UserListDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid query (e.g. pageSize above 100, malformed UUID).' })
  list(@CurrentAuth() auth: AuthContext, @Query() query: ListUsersQuery) {
    return this.users.list(auth, query);
  }

  @Post()
  @RequireFeatures('auth.users.create')
  @ApiOperation({
    summary: 'Creates a user; without a password, emails an invitation with a 48-hour setup link.',
    description:
      'Tenant and organization default to the caller’s. The invitation is queued after the user is committed; ' +
      'if queueing fails the user still exists and POST /auth/users/resend-invite sends it again. Command ' +
      '`auth.users.create`; the response carries `X-Undo-Token`: undo removes the user as DELETE does (its sessions ' +
      'and setup token end; an invitation email already sent is not recalled), redo brings the same user back.',
  })
  @ApiCreatedResponse({ type: CreatedIdDto })
  @ApiBadRequestResponse({
    type: ErrorDto,
    description: 'Invalid payload, unknown tenant, organization not in the tenant, or a role not usable in the tenant.',
  })
  @ApiConflictResponse({ type: ErrorDto, description: '`{error: "email already exists"}`' })
  create(@CurrentAuth() auth: AuthContext, @Body() body: CreateUserDto) {
    return this.users.create(auth, body);
  }

  @Put()
  @RequireFeatures('auth.users.edit')
  @ApiOperation({
    summary: 'Edits a user; `roleIds` replaces its roles, a new password ends all its sessions.',
    description:
      'A caller who is not a super administrator cannot edit a super administrator, nor a user holding features it does not hold itself (403). ' +
      'Command `auth.users.update`, with `X-Undo-Token` (undo restores email, name, organization and roles). An edit that ' +
      'sets a password runs as `auth.users.password.update`: logged without the password hash, and not undoable (no ' +
      '`X-Undo-Token`); earlier edits of that user can no longer be undone either.',
  })
  @ApiOkResponse({ type: OkDto })
  @ApiBadRequestResponse({
    type: ErrorDto,
    description: 'Invalid payload, nothing to update, organization not in the tenant, or unknown role.',
  })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'No such user in the caller’s tenant.' })
  @ApiConflictResponse({ type: ErrorDto, description: '`{error: "email already exists"}`' })
  update(@CurrentAuth() auth: AuthContext, @Body() body: UpdateUserDto) {
    return this.users.update(auth, body);
  }

  @Delete()
  @RequireFeatures('auth.users.delete')
  @ApiOperation({
    summary: 'Soft-deletes a user: removes its roles and user ACL, ends its sessions, voids its pending setup/reset tokens.',
    description:
      'The email becomes free for a new user. A caller cannot delete itself (400). Command `auth.users.delete`, with ' +
      '`X-Undo-Token`: undo restores the user with its roles and user ACL (409 if its email was taken meanwhile); ' +
      'its sessions and tokens stay ended.',
  })
  @ApiOkResponse({ type: OkDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Missing or malformed id, or the caller’s own id.' })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'No such user in the caller’s tenant.' })
  remove(@CurrentAuth() auth: AuthContext, @Query() query: UserIdQuery) {
    return this.users.remove(auth, query.id);
  }

  @Post('resend-invite')
  @HttpCode(200)
  @RequireFeatures('auth.users.create')
  @ApiOperation({
    summary: 'Issues a new 48-hour setup token (earlier ones stop working) and emails it.',
    description: 'Rate limit: 3 requests per 300 seconds per client IP (429 with Retry-After).',
  })
  @ApiHeader({ name: 'Origin', required: false, description: 'When present, must be one of PLATFORM_ALLOWED_ORIGINS.' })
  @ApiOkResponse({ type: OkDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: '`{error: "invalid request origin"}`, or a malformed id.' })
  @ApiNotFoundResponse({ type: ErrorDto, description: '`{error: "user not found"}`' })
  @ApiConflictResponse({ type: ErrorDto, description: '`{error: "user already has a password"}`' })
  @ApiTooManyRequestsResponse({ type: ErrorDto })
  resendInvite(
    @CurrentAuth() auth: AuthContext,
    @Body() body: ResendInviteDto,
    @ClientIp() ip: string,
    @Headers('origin') origin: string | undefined,
  ) {
    return this.invitations.resendInvite(auth, body.id, { ip, origin });
  }
}
