import { z } from 'zod';

/** The port the server listens on when PORT is unset. */
export const DEFAULT_PORT = 3000;

/** PORT as the server reads it (0: a free port the system picks; empty, like unset: the default). */
export const portSetting = z.preprocess((value) => (value === '' ? undefined : value), z.coerce.number().int().min(0).max(65535).default(DEFAULT_PORT));

/**
 * The port a server started with `env` listens on, read exactly as the server reads it, so that a
 * client on the same machine (`npm run call`) dials the port the server chose; undefined when PORT
 * is not a valid port (the server would refuse to start). The server reads only its environment, no
 * .env file, so neither does this.
 */
export function serverPortOf(env: NodeJS.ProcessEnv): number | undefined {
  const parsed = portSetting.safeParse(env['PORT']);
  return parsed.success ? parsed.data : undefined;
}
