// The bench's baseline for the HTTP stack: a plain Express 5 app (the version Nest's adapter runs)
// answering GET /healthz with the same JSON as the APIs, in its own process like them, on $PORT.
import express from 'express';

const app = express();
app.disable('x-powered-by');
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
