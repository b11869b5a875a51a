import type { INestApplication } from '@nestjs/common';
import type { Express, NextFunction, Request, Response } from 'express';
import { CONSOLE_HEADERS } from '../console/console-static';

/**
 * The Swagger UI page at `path`, served under the console's headers: its CSP (nothing but `self`, no
 * inline script or style, `frame-ancestors 'none'`), X-Frame-Options DENY, nosniff, no Referer.
 * @nestjs/swagger's own page has inline <style> blocks and a style attribute that this CSP refuses,
 * so the page is ours: swagger-ui-dist's own index.html (its styles in index.css), loading the
 * swagger-ui-init.js that @nestjs/swagger serves with the document. Every script and stylesheet is
 * a file from this origin, so no nonce or hash is needed. Must be registered before
 * SwaggerModule.setup: the first route for a path answers.
 */
export function serveSwaggerUiPage(app: INestApplication, path: string, title: string): void {
  const express = app.getHttpAdapter().getInstance() as Express;
  express.use(path, (_request: Request, response: Response, next: NextFunction) => {
    for (const [name, value] of Object.entries(CONSOLE_HEADERS)) response.setHeader(name, value);
    next();
  });
  const pageAt = (assets: string) => swaggerUiHtml(assets, title);
  // Relative links, as @nestjs/swagger's: `/docs` loads `./docs/x`, `/docs/` and `/docs/index.html` load `./x`.
  const slashed = pageAt('./');
  const unslashed = pageAt(`./${path.split('/').pop()}/`);
  express.get([path, `${path}/`, `${path}/index.html`], (request: Request, response: Response) => {
    const inFolder = request.path.endsWith('/') || request.path.endsWith('/index.html');
    response.type('text/html').setHeader('cache-control', 'no-cache');
    response.send(inFolder ? slashed : unslashed);
  });
}

function swaggerUiHtml(assets: string, title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>${title}</title>
  <link rel="stylesheet" type="text/css" href="${assets}swagger-ui.css">
  <link rel="stylesheet" type="text/css" href="${assets}index.css">
  <link rel="icon" type="image/png" href="${assets}favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="${assets}favicon-16x16.png" sizes="16x16">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${assets}swagger-ui-bundle.js" charset="UTF-8"></script>
  <script src="${assets}swagger-ui-standalone-preset.js" charset="UTF-8"></script>
  <script src="${assets}swagger-ui-init.js" charset="UTF-8"></script>
</body>
</html>
`;
}
