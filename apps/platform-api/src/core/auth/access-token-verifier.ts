import { createSecretKey, type KeyObject } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import type { AccessTokenClaims } from './jwt-claims.js';

/** Verified tokens kept; the oldest goes first past this (a token is ~300 bytes). */
const MAX_VERIFIED_TOKENS = 10_000;

type VerifiedClaims = AccessTokenClaims & { exp?: number; nbf?: number };

/**
 * Verifies access tokens (HS256 with AUTH_JWT_SECRET, jsonwebtoken through @nestjs/jwt) and remembers the ones
 * that verified: a client sends the same token with every request for hours, and the signature check,
 * the base64 and JSON decoding of a token cost more CPU than the rest of a cached request's auth.
 * Only tokens that verified are kept (an invalid one cannot fill the map), keyed by the whole token:
 * the same string carries the same signature, so it verifies the same way every time; the only thing
 * that changes is time, so expiry (and not-before) is checked again on every use, as jsonwebtoken
 * does. Revocation is not a token matter: the session check that follows runs on every request.
 */
@Injectable()
export class AccessTokenVerifier {
  private readonly jwt = new JwtService();
  private readonly key: KeyObject;
  private readonly verified = new Map<string, VerifiedClaims>();

  constructor(@Inject(PLATFORM_CONFIG) config: PlatformConfig) {
    // A KeyObject, not the string: jsonwebtoken otherwise rebuilds a key from the string on every verify.
    this.key = createSecretKey(Buffer.from(config.jwtSecret, 'utf8'));
  }

  /** The token's claims, or null when it is not a valid, current access token. */
  verify(token: string): AccessTokenClaims | null {
    let claims = this.verified.get(token);
    if (!claims) {
      try {
        // (@nestjs/jwt types the secret as a string or Buffer; jsonwebtoken takes the KeyObject.)
        claims = this.jwt.verify<VerifiedClaims>(token, { secret: this.key as unknown as Buffer, algorithms: ['HS256'] });
      } catch {
        return null;
      }
      if (typeof claims !== 'object' || claims === null) return null;
      if (this.verified.size >= MAX_VERIFIED_TOKENS) this.verified.delete(this.verified.keys().next().value as string);
      this.verified.set(token, claims);
    }
    const now = Math.floor(Date.now() / 1000);
    // jsonwebtoken's own rules (no clock tolerance): expired at `exp`, valid from `nbf`.
    if (typeof claims.exp === 'number' && now >= claims.exp) {
      this.verified.delete(token);
      return null;
    }
    if (typeof claims.nbf === 'number' && now < claims.nbf) return null;
    return claims;
  }
}
