import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { DEFAULT_BODY_LIMIT, readRequestBody } from '@app/service-kit';
import { AccessAuthenticator } from '../../core/auth/access-authenticator.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { FEATURE_CHECK_MAX_FEATURE_LENGTH, FEATURE_CHECK_MAX_FEATURES } from './auth.dto.js';
import { ProfileService } from './profile.service.js';

/**
 * `POST /auth/feature-check` answered in front of its Nest route when the answer is certain: the
 * caller authenticated (the AuthGuard's own authenticator, cached session and ACL) and a body the
 * route would take as it is (`{features}` alone, a list FeatureCheckDto accepts). The answer is the
 * route's: ProfileService.checkFeatures, sent the way Nest sends a returned object (`res.json`, 200).
 * Anything else, an error included, goes on to the route untouched (`next()`), which answers it with
 * its guards, validation and `{ok: false, error}` bodies; a body already read is read once (the
 * route's body guard gets the same outcome from readRequestBody).
 *
 * Why it exists: clients call this route before rendering each screen, and on it Nest's own pipeline
 * (router context, guards, pipes, class-transformer and class-validator) cost more CPU than the work
 * itself: 0.54x a plain Express app doing the same (issue #34, bench/README.md). Only the fast answer
 * is here; every refusal stays the route's, so there is one place that shapes errors.
 *
 * The body check may be stricter than FeatureCheckDto, never looser: a body it refuses only costs the
 * route's pipeline (`length` counts UTF-16 units where class-validator counts code points).
 */
@Injectable()
export class FeatureCheckFastPath implements NestMiddleware {
  constructor(
    private readonly authenticator: AccessAuthenticator,
    private readonly profile: ProfileService,
  ) {}

  use(req: Request, res: Response, next: NextFunction): void {
    // The route's body guard refuses NUL characters in the URL (400).
    if (req.url.includes('%00')) return next();
    let auth: AuthContext | null | Promise<AuthContext | null>;
    try {
      auth = this.authenticator.authenticate(req);
    } catch {
      return next(); // a session that ended: the route's guard answers 401
    }
    if (auth instanceof Promise) {
      // A cold cache: once loaded, the route's guard finds it warm; a failure is the route's to answer.
      auth.then(
        (loaded) => this.answer(req, res, next, loaded),
        () => next(),
      );
    } else {
      this.answer(req, res, next, auth);
    }
  }

  private answer(req: Request, res: Response, next: NextFunction, auth: AuthContext | null): void {
    if (!auth) return next(); // no valid token: 401 from the route's guard
    // The route's limit: it has no @BodyLimit, and createPlatformHttpApp keeps the default.
    readRequestBody(req, res, DEFAULT_BODY_LIMIT).then(
      () => this.respond(req, res, next, auth),
      () => next(), // malformed, too large or of an unsupported type: the route's guard rethrows it
    );
  }

  private respond(req: Request, res: Response, next: NextFunction, auth: AuthContext): void {
    const features = acceptedFeatures(req.body);
    if (!features) return next();
    let result: ReturnType<ProfileService['checkFeatures']>;
    try {
      result = this.profile.checkFeatures(auth, features);
    } catch {
      // Inside a promise callback a throw would leave the request unanswered: the route answers instead.
      return next();
    }
    res.status(200).json(result);
  }
}

/** The features of a body FeatureCheckDto takes as it is (`{features}` alone, every entry valid), else null. */
export function acceptedFeatures(body: unknown): string[] | null {
  if (typeof body !== 'object' || body === null || Object.getPrototypeOf(body) !== Object.prototype) return null;
  const keys = Object.keys(body);
  if (keys.length !== 1 || keys[0] !== 'features') return null;
  const features = (body as { features: unknown }).features;
  if (!Array.isArray(features) || features.length > FEATURE_CHECK_MAX_FEATURES) return null;
  // A loop that stops at the first bad entry; holes (sparse arrays) read as undefined and stop it too.
  for (let i = 0; i < features.length; i++) {
    const feature: unknown = features[i];
    if (
      typeof feature !== 'string' ||
      feature.length === 0 ||
      feature.length > FEATURE_CHECK_MAX_FEATURE_LENGTH ||
      feature.includes('\u0000')
    ) {
      return null;
    }
  }
  return features as string[];
}
