import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';

export interface HttpAppOptions {
  /** Applies the app's pipes, filters and OpenAPI; shared by main.ts and the e2e tests. */
  configure: (app: NestExpressApplication) => void | Promise<void>;
  /** Largest JSON / form body accepted. */
  bodyLimit?: string;
}

/**
 * Creates a Nest app on Express with JSON logs, graceful shutdown (SIGTERM: stop accepting, drain
 * in-flight requests, close pools) and the app's own configuration.
 */
export async function createHttpApp(module: unknown, options: HttpAppOptions): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module as never, { bufferLogs: true, bodyParser: false });
  app.useLogger(app.get(Logger));
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback, linklocal, uniquelocal');
  const limit = options.bodyLimit ?? '1mb';
  app.useBodyParser('json', { limit });
  app.useBodyParser('urlencoded', { limit, extended: true });
  app.enableShutdownHooks();
  await options.configure(app);
  return app;
}

/** Listens, and on close lets idle keep-alive sockets go so shutdown does not wait for clients. */
export async function listen(app: INestApplication, port: number, host = '0.0.0.0'): Promise<string> {
  await app.listen(port, host);
  const server = app.getHttpServer() as Server;
  server.keepAliveTimeout = 65_000; // longer than typical load-balancer idle timeouts
  server.on('close', () => server.closeIdleConnections?.());
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return `http://127.0.0.1:${actualPort}`;
}
