import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

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
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', yamlDocumentUrl: 'openapi.yaml' });
}
