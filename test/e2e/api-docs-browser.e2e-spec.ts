import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { startTestServer, type TestServer } from '../support/test-server';

/** What the console's pages are served under (apps/server/src/console/console-static.ts): only this origin, no framing. */
const CONSOLE_POLICY = { 'default-src': "'self'", 'script-src': "'self'", 'style-src': "'self'", 'connect-src': "'self'", 'frame-ancestors': "'none'", 'base-uri': "'none'" };

function directives(csp: string): Record<string, string> {
  return Object.fromEntries(csp.split(';').map((part) => part.trim()).filter(Boolean).map((part) => [part.split(/\s+/)[0]!, part.split(/\s+/).slice(1).join(' ')]));
}

/**
 * The API's Swagger UI page (/docs) is public: it is served under the console's headers (a CSP of
 * `self` only, no inline script or style, no framing), and in real Chromium it still renders the
 * API, with no CSP violation.
 */
describe('the API docs page (/docs) in Chromium (e2e)', () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer(), launchChromium()]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("is served under the console's CSP and cannot be framed", async () => {
    for (const path of ['/docs', '/docs/', '/docs/index.html', '/docs/swagger-ui-init.js', '/docs/swagger-ui-bundle.js']) {
      const response = await fetch(`${server.serverUrl}${path}`);
      await response.arrayBuffer();
      expect({ path, status: response.status, frame: response.headers.get('x-frame-options') }).toEqual({ path, status: 200, frame: 'DENY' });
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(directives(csp)).toMatchObject(CONSOLE_POLICY);
      expect(csp).not.toMatch(/unsafe-(inline|eval|hashes)/);
    }
  });

  it('renders the API title and its operations under that CSP, with no violation and no error in the console', async () => {
    for (const path of ['/docs', '/docs/']) {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(String(error)));
      // Runs before the page's own scripts (and is not subject to its CSP): records every violation.
      await page.addInitScript(() => {
        const scope = globalThis as unknown as { cspViolations: string[]; document: { addEventListener(type: string, listener: (event: { violatedDirective: string; blockedURI: string }) => void): void } };
        scope.cspViolations = [];
        scope.document.addEventListener('securitypolicyviolation', (event) => scope.cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`));
      });
      const response = await page.goto(`${server.serverUrl}${path}`);
      expect(directives(response?.headers()['content-security-policy'] ?? '')).toMatchObject(CONSOLE_POLICY);
      await page.getByRole('heading', { name: /Switchboard API/ }).waitFor({ timeout: 20_000 });
      await page.locator('[data-path="/v1/agents"]').first().waitFor({ timeout: 20_000 });
      const violations = await page.evaluate(() => (globalThis as unknown as { cspViolations: string[] }).cspViolations);
      expect({ path, violations, problems }).toEqual({ path, violations: [], problems: [] });
      await page.close();
    }
  }, 60_000);
});
