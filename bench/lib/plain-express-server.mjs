// The bench's baselines for the HTTP stack: a plain Express 5 app (the version Nest's adapter runs), in
// its own process like the APIs, on $PORT. GET /healthz answers the same JSON as the APIs (issue #12's
// baseline). The two /auth routes are the least plain Express does for what the platform's
// `GET /auth/profile` and `POST /auth/feature-check` do: check an HS256 bearer token's signature
// (BENCH_PLAIN_JWT_SECRET) and answer JSON, the POST after parsing a JSON body with express.json().
// Their ratios to this app's /healthz are what the framework itself allows those shapes of request
// (issue #18: a target above it is bound by the stack, not by our code).
import { createHmac, timingSafeEqual } from 'node:crypto';
import express from 'express';

const secret = process.env.BENCH_PLAIN_JWT_SECRET ?? '';

/** The claims of a valid `Authorization: Bearer <jwt>` (HS256), or null. */
function bearerClaims(req) {
  const [scheme, token] = (req.headers.authorization ?? '').split(' ', 2);
  if (scheme !== 'Bearer' || !token) return null;
  const [header, payload, signature] = token.split('.');
  const expected = createHmac('sha256', secret).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature ?? '', 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  return claims.exp * 1000 > Date.now() ? claims : null;
}

const app = express();
app.disable('x-powered-by');
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
app.get('/auth/profile', (req, res) => {
  const claims = bearerClaims(req);
  if (!claims) return res.status(401).json({ ok: false });
  res.json({ email: claims.email, roles: claims.roles });
});
// The platform's feature match (decisions.md "Feature match"): `*`, `x.*` (x and below), else exact.
const grants = (granted, required) =>
  granted === '*' ||
  (granted.endsWith('.*') ? required === granted.slice(0, -2) || required.startsWith(granted.slice(0, -1)) : granted === required);
// The in-process caches the platform answers from once warm: the session (by the token's `sid`) and the
// ACL of the caller's roles in its tenant (issue #34: "verify the JWT, resolve the ACL from cache, match").
const sessions = new Map();
const acls = new Map();
function cachedAccess(claims) {
  let session = sessions.get(claims.sid);
  if (!session) sessions.set(claims.sid, (session = { userId: claims.sub, revoked: false }));
  const aclKey = `${claims.tenantId}:${claims.roles.join(',')}`;
  let acl = acls.get(aclKey);
  if (!acl) acls.set(aclKey, (acl = { isSuperAdmin: claims.roles.includes('superadmin'), features: ['auth.*', 'directory.tenants.view'] }));
  return session.revoked ? null : { session, acl };
}
app.post('/auth/feature-check', express.json(), (req, res) => {
  const claims = bearerClaims(req);
  const access = claims && cachedAccess(claims);
  if (!access) return res.status(401).json({ ok: false });
  const features = req.body?.features;
  if (!Array.isArray(features) || features.length > 50 || !features.every((f) => typeof f === 'string' && f.length > 0 && f.length <= 128))
    return res.status(400).json({ ok: false });
  const granted = features.filter((f) => access.acl.isSuperAdmin || access.acl.features.some((g) => grants(g, f)));
  res.json({ ok: granted.length === features.length, granted, userId: access.session.userId });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening ${server.address().port}`);
});
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
