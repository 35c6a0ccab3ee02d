import { Body, Controller, Get, Header, Headers, HttpCode, Inject, Post, Put, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiBearerAuth, ApiConsumes, ApiCreatedResponse, ApiFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { DomainError } from '@app/service-kit';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import { ClientIp, CurrentAuth, Public } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { ACCESS_TOKEN_TTL_SECONDS, SESSION_COOKIE } from '../../core/auth/jwt-claims.js';
import { readCookie } from '../../core/auth/request-cookies.js';
import { OkFalseExceptionFilter } from '../../core/errors/platform-exception.filter.js';
import { AuthCookies } from './auth-cookies.js';
import {
  FeatureCheckResultDto,
  LOCALE_SCHEMA,
  LoginResultDto,
  ProfileDto,
  ProfileUpdatedDto,
  RefreshResultDto,
} from './auth-responses.dto.js';
import { FeatureCheckDto, LocaleDto, LoginDto, RefreshDto, UpdateProfileDto } from './auth.dto.js';
import { AuthService } from './auth.service.js';
import { ProfileService } from './profile.service.js';
import { safeRedirect } from './safe-redirect.js';

/** The logout routes answer a redirect, not JSON (platform-api.md: "302 redirect to login"). */
const REDIRECT_TO_LOGIN = { description: 'Redirect (Location) to the login page; the auth cookies are cleared.' };

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  private readonly cookies: AuthCookies;

  constructor(
    private readonly auth: AuthService,
    private readonly profile: ProfileService,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {
    this.cookies = new AuthCookies(config.appUrl.startsWith('https:'));
  }

  @Post('login')
  @Public()
  @HttpCode(200)
  @UseFilters(OkFalseExceptionFilter)
  @ApiConsumes('application/x-www-form-urlencoded', 'application/json')
  @ApiOperation({
    summary: 'Log in (form-urlencoded). Sets auth_token and session_token cookies; refreshToken in the body with remember.',
    description:
      'One account is checked per login: the one in `tenantId` when given, else the oldest account with this email and a password in an active tenant. ' +
      'Users of a deactivated tenant cannot log in (401 invalid credentials).',
  })
  @ApiOkResponse({ type: LoginResultDto })
  async login(
    @Body() body: LoginDto,
    @ClientIp() ip: string,
    @Headers('user-agent') userAgent: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    const result = await this.auth.login(
      { email: body.email, password: body.password, remember: Boolean(body.remember), tenantId: body.tenantId },
      { ip, userAgent: userAgent ?? null },
    );
    this.cookies.setAccessToken(res, result.token, ACCESS_TOKEN_TTL_SECONDS);
    this.cookies.setSessionToken(res, result.sessionToken, result.sessionExpiresAt);
    const redirect = body.redirect ? safeRedirect(body.redirect, this.config.allowedOrigins, '/') : null;
    return { ok: true, token: result.token, redirect, ...(result.refreshToken ? { refreshToken: result.refreshToken } : {}) };
  }

  @Post('logout')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Ends the session, clears the auth cookies, 302 to the login page.' })
  @ApiFoundResponse(REDIRECT_TO_LOGIN)
  async logout(@CurrentAuth() auth: AuthContext, @Res() res: Response) {
    await this.auth.logout(auth);
    this.cookies.clear(res);
    res.redirect(302, `${this.config.appUrl}/login`);
  }

  @Get('logout')
  @ApiBearerAuth()
  @ApiOperation({ summary: 'Same as POST /auth/logout (for links).' })
  @ApiFoundResponse(REDIRECT_TO_LOGIN)
  logoutViaGet(@CurrentAuth() auth: AuthContext, @Res() res: Response) {
    return this.logout(auth, res);
  }

  @Post('session/refresh')
  @Public()
  @HttpCode(200)
  @UseFilters(OkFalseExceptionFilter)
  @ApiOperation({
    summary:
      'API clients: refreshToken for a new access token (expiresIn in seconds). 401 once the session ended or its tenant was deactivated.',
  })
  @ApiOkResponse({ type: RefreshResultDto })
  async refresh(@Body() body: RefreshDto, @ClientIp() ip: string) {
    const { accessToken, expiresIn } = await this.auth.refreshWithRefreshToken(body.refreshToken, ip);
    return { ok: true, accessToken, expiresIn };
  }

  @Get('session/refresh')
  @Public()
  @ApiOperation({
    summary: 'Browsers: session_token cookie for a fresh auth_token cookie, then 302 to a safe `redirect`.',
    description:
      'A safe redirect is a path on this site or a URL on an allowed origin, with no control characters or backslashes; anything else redirects to "/".',
  })
  @ApiFoundResponse({ description: 'Redirect (Location) to the safe `redirect`; the fresh auth_token cookie is set.' })
  async refreshViaCookie(
    @Req() req: Request,
    @Query('redirect') redirect: string | undefined,
    @ClientIp() ip: string,
    @Res() res: Response,
  ) {
    const sessionToken = readCookie(req, SESSION_COOKIE);
    if (!sessionToken) throw DomainError.unauthorized('no session');
    const { accessToken, expiresIn } = await this.auth.refreshWithSessionToken(sessionToken, ip);
    this.cookies.setAccessToken(res, accessToken, expiresIn);
    res.redirect(302, safeRedirect(redirect, this.config.allowedOrigins, '/'));
  }

  @Get('profile')
  @ApiBearerAuth()
  @ApiOkResponse({ type: ProfileDto })
  getProfile(@CurrentAuth() auth: AuthContext) {
    return this.profile.getProfile(auth);
  }

  @Put('profile')
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Change the caller’s email and/or password ({email?, password?, currentPassword}).',
    description:
      'Both changes need currentPassword: 400 when it is missing, 403 when it is wrong, 429 (Retry-After) after 5 attempts per user in 5 minutes. ' +
      'A new password ends the caller’s other sessions (and their event streams); this one stays logged in.',
  })
  @ApiOkResponse({ type: ProfileUpdatedDto })
  updateProfile(@CurrentAuth() auth: AuthContext, @Body() body: UpdateProfileDto) {
    return this.profile.updateProfile(auth, body);
  }

  @Post('feature-check')
  @ApiBearerAuth()
  @HttpCode(200)
  @UseFilters(OkFalseExceptionFilter)
  @ApiOkResponse({ type: FeatureCheckResultDto })
  featureCheck(@CurrentAuth() auth: AuthContext, @Body() body: FeatureCheckDto) {
    return this.profile.checkFeatures(auth, body.features);
  }

  @Get('locale')
  @ApiBearerAuth()
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({ summary: 'The caller’s locale as a JSON string (default "en").' })
  @ApiOkResponse({ schema: LOCALE_SCHEMA })
  async getLocale(@CurrentAuth() auth: AuthContext) {
    return JSON.stringify(await this.profile.getLocale(auth));
  }

  @Post('locale')
  @ApiBearerAuth()
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({ summary: 'Sets the caller’s locale ({locale}); answers it as a JSON string.' })
  @ApiCreatedResponse({ schema: LOCALE_SCHEMA })
  async setLocale(@CurrentAuth() auth: AuthContext, @Body() body: LocaleDto) {
    return JSON.stringify(await this.profile.setLocale(auth, body.locale));
  }
}
