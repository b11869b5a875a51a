import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { loadAppConfig } from '@switchboard/config';
import { cleanupOpenApiDoc } from 'nestjs-zod';
import { AppModule } from '../app.module';
import { serveSwaggerUiPage } from './swagger-ui-page';

const API_TITLE = 'Switchboard API';
export const OPENAPI_UI_PATH = 'docs';
export const OPENAPI_JSON_PATH = 'docs/openapi.json';
/** Where the committed copy lives (CI fails when it differs from what the code generates). */
export const COMMITTED_OPENAPI_FILE = 'docs/openapi.json';

/**
 * The OpenAPI 3 document of the REST API, built from the controllers' decorators and the zod schemas
 * that also validate the requests (nestjs-zod), so the document cannot describe a request shape the
 * server does not accept.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle(API_TITLE)
    .setDescription(
      'Admin and integration API of a Switchboard deployment: agents, phone numbers, calls (including outbound calls), ' +
        'API keys, webhook subscriptions and their delivery log. Every /v1 route needs `Authorization: Bearer <API key>`; ' +
        'keys are scoped to one organization and never see another\'s data (404). Lists page with `cursor` / `nextCursor`. ' +
        'Errors answer `{ statusCode, error, code, message, details? }`. Every response carries `x-request-id`.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key (sk_live_...) with scope `read` or `admin`.' })
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controllerKey, methodKey) => `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
  // 3.1: its schemas are plain JSON Schema 2020-12, so clients (and our contract test) validate with stock tools.
  return cleanupOpenApiDoc(document);
}

/** Serves the UI at /docs (under the console's CSP) and the JSON at /docs/openapi.json. */
export function serveOpenApiDocument(app: INestApplication): void {
  serveSwaggerUiPage(app, `/${OPENAPI_UI_PATH}`, API_TITLE);
  SwaggerModule.setup(OPENAPI_UI_PATH, app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    yamlDocumentUrl: 'docs/openapi.yaml',
    swaggerOptions: {
      // No top bar (its spec-URL box is no use here), and no badge image from validator.swagger.io,
      // which the CSP would refuse and which would tell that site where the API is.
      layout: 'BaseLayout',
      validatorUrl: 'none',
    },
  });
}

/**
 * Builds the document without starting anything: the module graph in preview mode instantiates no
 * provider, so no database, inference worker or port is needed (used by `npm run openapi` and the
 * drift test).
 */
export async function generateOpenApiDocument(): Promise<OpenAPIObject> {
  const config = loadAppConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'https://switchboard.example.com' });
  const app = await NestFactory.create(AppModule.forRoot(config), { preview: true, logger: false, abortOnError: false });
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}

/** Stable text for the committed copy: two-space JSON and a final newline. */
export function serialiseOpenApiDocument(document: OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
