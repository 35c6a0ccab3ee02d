import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Router, type Express, type NextFunction, type Request, type Response } from 'express';

/** Where `setupOpenApi` serves: Swagger UI (and its assets) under `/docs`, the document at the root. */
const DOCS_PATHS = /^\/(?:docs(?:\/.*)?|openapi\.(?:json|yaml))$/;

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
 * route, so each API request walked past them. They move into one router behind one route whose
 * pattern only docs paths match: an API request pays one regular-expression test for the docs, not a
 * middleware call (bench/README.md, "HTTP stack").
 */
function gatherDocsLayers(express: Express, firstDocsLayer: number): void {
  const docs = Router();
  docs.stack.push(...express.router.stack.splice(firstDocsLayer));
  express.all(DOCS_PATHS, (req: Request, res: Response, next: NextFunction) => {
    docs(req, res, next);
  });
}
