// bench/http-metrics.mjs's measured app: the plain Express 5 baseline (lib/plain-express-server.mjs)
// plus exactly what createHttpApp adds per request for metrics and shutdown, service-kit's
// HttpMetrics (the latency histogram by route pattern) and the shutting-down check, on $PORT.
import express from 'express';
import { HttpMetrics, MetricsRegistry } from '@app/service-kit';

const metrics = new HttpMetrics(new MetricsRegistry({ service: 'bench' }));
const adapter = { isShuttingDown: false };
const app = express();
app.disable('x-powered-by');
app.use((req, res, next) => {
  if (adapter.isShuttingDown) res.setHeader('Connection', 'close');
  metrics.track(req, res);
  next();
});
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening ${server.address().port}`);
});
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
