import 'reflect-metadata';
import { ConfigValidationError, loadAppConfig } from '@switchboard/config';
import { createServerApp } from './server-app';

async function main(): Promise<void> {
  let config;
  try {
    config = loadAppConfig();
  } catch (error) {
    if (error instanceof ConfigValidationError) {
      // One plain message listing every bad variable; the logger is not up yet.
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const app = await createServerApp(config);
  await app.listen(config.port, '0.0.0.0');
}

main().catch((error: unknown) => {
  process.stderr.write(`switchboard failed to start: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
