import type { Response } from 'express';
import { AUTH_COOKIE, SESSION_COOKIE } from '../../core/auth/jwt-claims.js';

/**
 * The one place that writes auth cookies, so controllers stay free of Express details.
 * httpOnly + SameSite=Lax; `Secure` when the app is served over https.
 */
export class AuthCookies {
  constructor(private readonly secure: boolean) {}

  setAccessToken(res: Response, token: string, expiresInSeconds: number): void {
    res.cookie(AUTH_COOKIE, token, this.options(expiresInSeconds * 1000));
  }

  setSessionToken(res: Response, token: string, expiresAt: Date): void {
    res.cookie(SESSION_COOKIE, token, this.options(expiresAt.getTime() - Date.now()));
  }

  clear(res: Response): void {
    res.clearCookie(AUTH_COOKIE, this.options());
    res.clearCookie(SESSION_COOKIE, this.options());
  }

  private options(maxAge?: number) {
    return { httpOnly: true, sameSite: 'lax' as const, secure: this.secure, path: '/', ...(maxAge ? { maxAge } : {}) };
  }
}
