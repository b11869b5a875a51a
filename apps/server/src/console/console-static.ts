import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';

/** Where `npm run build` writes the console (apps/console, built by Vite). */
export function defaultConsoleDir(): string {
  return resolve(process.cwd(), 'dist', 'console');
}

/**
 * The console is static files from the same origin as the API, so its pages need nothing but
 * `self`: no inline script, no other origin, no framing (clickjacking), no Referer (a first-run
 * token lives in the URL fragment, which browsers never send, and nothing else should leak either).
 * The API's Swagger UI page (/docs) is served under the same headers.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/**
 * Serves the built console at `/`. Hashed assets are cached for a year; index.html never (so a
 * new build is picked up at the next load). Without a build, `/` says how to make one instead of
 * a bare 404.
 */
export function serveConsole(app: NestExpressApplication, consoleDir = defaultConsoleDir()): void {
  if (!existsSync(join(consoleDir, 'index.html'))) {
    app.getHttpAdapter().getInstance().get('/', (_request, response) => {
      response.status(503).type('text/plain').send('The console is not built. Run `npm run build` (npm start does), then reload.\n');
    });
    return;
  }
  app.useStaticAssets(consoleDir, {
    index: 'index.html',
    redirect: false,
    setHeaders: (response, path) => {
      for (const [name, value] of Object.entries(CONSOLE_HEADERS)) response.setHeader(name, value);
      response.setHeader('cache-control', path.endsWith('index.html') ? 'no-cache' : 'public, max-age=31536000, immutable');
    },
  });
}
