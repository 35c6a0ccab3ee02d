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
app.post('/auth/feature-check', express.json(), (req, res) => {
  const claims = bearerClaims(req);
  if (!claims) return res.status(401).json({ ok: false });
  const features = req.body?.features;
  if (!Array.isArray(features) || !features.every((f) => typeof f === 'string')) return res.status(400).json({ ok: false });
  res.json({ ok: true, granted: features.filter((f) => claims.roles.includes('superadmin') || f.startsWith('auth.')), userId: claims.sub });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening ${server.address().port}`);
});
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
