import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Router, type Express, type NextFunction, type Request, type Response } from 'express';

/** Where `setupOpenApi` serves: Swagger UI (and its assets) under `/docs`, the document at the root. */
const DOCS_PREFIX = '/docs';
const DOCUMENT_PATHS = new Set(['/openapi.json', '/openapi.yaml']);

/** `GET /openapi.json` and Swagger UI at `/docs`, generated from the controllers and DTOs. */
export function setupOpenApi(
  app: INestApplication,
  info: { title: string; description: string; version: string; bearerDescription: string },
): void {
  const config = new DocumentBuilder()
    .setTitle(info.title)
    .setDescription(info.description)
    .setVersion(info.version)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: info.bearerDescription })
    .build();
  const document = SwaggerModule.createDocument(app, config);
  const express = app.getHttpAdapter().getInstance() as Express;
  const firstDocsLayer = express.router.stack.length;
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', yamlDocumentUrl: 'openapi.yaml' });
  gatherDocsLayers(express, firstDocsLayer);
}

/**
 * Swagger registers nine Express layers (its routes and a static file server) ahead of every API
 * route, so each API request walked past them. They move into one router behind one cheap path
 * check: an API request passes a single layer (bench/README.md, "HTTP stack").
 */
function gatherDocsLayers(express: Express, firstDocsLayer: number): void {
  const docs = Router();
  docs.stack.push(...express.router.stack.splice(firstDocsLayer));
  express.use((req: Request, res: Response, next: NextFunction) => {
    const path = req.path;
    if (path.startsWith(DOCS_PREFIX) || DOCUMENT_PATHS.has(path)) docs(req, res, next);
    else next();
  });
}
