import { Body, Controller, Headers, HttpCode, Post, UseFilters } from '@nestjs/common';
import { ApiConsumes, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OkDto } from '../../core/http/common.dto.js';
import { ClientIp, Public } from '../../core/auth/auth.decorators.js';
import { OkFalseExceptionFilter } from '../../core/errors/platform-exception.filter.js';
import { ResetConfirmResultDto } from './auth-responses.dto.js';
import { ResetConfirmDto, ResetRequestDto } from './auth.dto.js';
import { PasswordResetService } from './password-reset.service.js';

@ApiTags('auth')
@Controller('auth/reset')
export class PasswordResetController {
  constructor(private readonly passwordReset: PasswordResetService) {}

  @Post()
  @Public()
  @HttpCode(200)
  @ApiConsumes('application/x-www-form-urlencoded', 'application/json')
  @ApiOperation({ summary: 'Requests a reset link. Always {ok: true}, for known and unknown accounts alike.' })
  @ApiOkResponse({ type: OkDto })
  async request(@Body() body: ResetRequestDto, @ClientIp() ip: string, @Headers('origin') origin: string | undefined) {
    await this.passwordReset.requestReset(body.email, body.tenantId ?? null, { ip, origin });
    return { ok: true };
  }

  @Post('confirm')
  @Public()
  @HttpCode(200)
  @UseFilters(OkFalseExceptionFilter)
  @ApiConsumes('application/x-www-form-urlencoded', 'application/json')
  @ApiOperation({ summary: 'Redeems a reset or invitation setup token and sets the password.' })
  @ApiOkResponse({ type: ResetConfirmResultDto })
  async confirm(@Body() body: ResetConfirmDto, @ClientIp() ip: string) {
    await this.passwordReset.confirm(body.token, body.password, ip);
    return { ok: true, redirect: '/login' };
  }
}
