import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { COMMITTED_OPENAPI_FILE, generateOpenApiDocument, serialiseOpenApiDocument } from '../../server/src/openapi/openapi-document';

/**
 * `npm run openapi`: regenerates the committed OpenAPI document from the code.
 * `npm run openapi -- --check`: exits 1 when the committed copy differs (CI runs the same check as a test).
 */
async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const file = resolve(__dirname, '../../..', COMMITTED_OPENAPI_FILE);
  const generated = serialiseOpenApiDocument(await generateOpenApiDocument());
  if (check) {
    let committed = '';
    try {
      committed = readFileSync(file, 'utf8');
    } catch {
      // Missing counts as drift.
    }
    if (committed !== generated) {
      process.stderr.write(`${COMMITTED_OPENAPI_FILE} is out of date: run \`npm run openapi\` and commit it.\n`);
      process.exit(1);
    }
    process.stdout.write(`${COMMITTED_OPENAPI_FILE} matches the code.\n`);
    return;
  }
  writeFileSync(file, generated);
  process.stdout.write(`wrote ${COMMITTED_OPENAPI_FILE}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
