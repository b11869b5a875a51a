import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMITTED_OPENAPI_FILE, generateOpenApiDocument, serialiseOpenApiDocument } from './openapi-document';

const ROOT = join(__dirname, '../../../..');

describe('OpenAPI document', () => {
  it(`is generated from the code and matches the committed ${COMMITTED_OPENAPI_FILE} (else run \`npm run openapi\`)`, async () => {
    const generated = serialiseOpenApiDocument(await generateOpenApiDocument());
    const committed = readFileSync(join(ROOT, COMMITTED_OPENAPI_FILE), 'utf8');
    expect(generated).toBe(committed);
  });

  it('documents every /v1 operation with a response schema, bearer auth and the 401 answer', async () => {
    const document = await generateOpenApiDocument();
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      (['get', 'post', 'patch', 'put', 'delete'] as const).flatMap((method) => (item[method] ? [{ path, method, operation: item[method] }] : [])),
    );
    const v1 = operations.filter(({ path }) => path.startsWith('/v1/'));
    expect(v1.length).toBeGreaterThanOrEqual(15);
    for (const { path, method, operation } of v1) {
      const where = `${method.toUpperCase()} ${path}`;
      expect({ where, security: operation.security }).toEqual({ where, security: [{ bearer: [] }] });
      expect({ where, has401: Boolean(operation.responses['401']) }).toEqual({ where, has401: true });
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'));
      expect({ where, success: success?.[0] }).toEqual({ where, success: expect.stringMatching(/^20[0-4]$/) });
      const [status, response] = success!;
      if (status !== '204') expect({ where, schema: Boolean((response as { content?: unknown }).content) }).toEqual({ where, schema: true });
    }
    // Twilio's callbacks are for Twilio, not API clients.
    expect(Object.keys(document.paths).some((path) => path.startsWith('/twilio'))).toBe(false);
  });
});
