import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { migrationsUpToDate } from './applied-migrations';
import { PersistenceError } from './persistence.errors';

export interface ApplyMigrationsOptions {
  /** Folder holding prisma.config.ts and prisma/migrations; found by walking up when omitted. */
  projectRoot?: string;
  /** Kill the CLI after this long. PGlite on a busy 2-core box needs ~10 s for the first run. */
  timeoutMs?: number;
}

export interface MigrationResult {
  durationMs: number;
  /** False when every migration was applied already, so the CLI was not run (applied-migrations.ts). */
  ranCli: boolean;
}

const DEFAULT_TIMEOUT_MS = 180_000;
const OUTPUT_EXCERPT_CHARS = 1_500;

/*
 * `migrate deploy` (prisma 6.19, WASM schema engine) prints its result and then idles ~10 s on
 * a timer the engine leaves behind before the process exits. The last line it prints is one of
 * these, after the migrations are committed, so once seen the child is told to exit. If a future
 * CLI words them differently, nothing breaks: we just wait for the exit code as usual.
 */
const DEPLOY_DONE_MARKER = /All migrations have been successfully applied\.|No pending migrations to apply\./;
const EXIT_GRACE_MS = 300;

/**
 * Applies the committed migrations (prisma/migrations) with `prisma migrate deploy` in a child
 * process. The CLI is the only supported way to run Prisma migrations; it must be a child
 * process rather than a blocking call because the embedded database may be served from this
 * very process' event loop. Already-applied migrations are skipped, so this is safe on every
 * boot; when all of them are, the CLI is not run at all (a restart's usual case).
 */
export async function applyMigrations(
  connectionString: string,
  options: ApplyMigrationsOptions = {},
): Promise<MigrationResult> {
  const projectRoot = options.projectRoot ?? findProjectRoot();
  const startedAt = Date.now();
  if (await migrationsUpToDate(connectionString, projectRoot)) return { durationMs: Date.now() - startedAt, ranCli: false };
  const cliPath = resolvePrismaCli(projectRoot);
  const { exitCode, output, timedOut, finishedByMarker } = await runCli(
    cliPath,
    ['migrate', 'deploy', '--config', join(projectRoot, 'prisma.config.ts')],
    {
      cwd: projectRoot,
      env: {
        ...process.env,
        DATABASE_URL: connectionString,
        // No update check or telemetry call: installs may be offline.
        PRISMA_HIDE_UPDATE_MESSAGE: '1',
        CHECKPOINT_DISABLE: '1',
      },
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      doneMarker: DEPLOY_DONE_MARKER,
    },
  );
  if ((exitCode === 0 || finishedByMarker) && !timedOut) return { durationMs: Date.now() - startedAt, ranCli: true };

  const excerpt = redactConnectionStrings(output, connectionString).trim().slice(-OUTPUT_EXCERPT_CHARS);
  const reason = timedOut ? `timed out after ${options.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms` : `exit code ${exitCode}`;
  // P1001/P1017 or a refused connection: the database is down, not the migration wrong.
  const retryable = timedOut || /P1001|P1017|ECONNREFUSED|Can't reach database/i.test(output);
  throw new PersistenceError(
    'migration_failed',
    `prisma migrate deploy failed (${reason}). Output (last ${OUTPUT_EXCERPT_CHARS} chars):\n${excerpt}`,
    retryable,
  );
}

function resolvePrismaCli(projectRoot: string): string {
  try {
    return require.resolve('prisma/build/index.js', { paths: [projectRoot] });
  } catch (error) {
    throw new PersistenceError(
      'migration_failed',
      "The Prisma CLI (npm package 'prisma') is not installed, so migrations cannot be applied at boot. " +
        'Install it as a production dependency, or start with migrations disabled and run `npm run db:migrate`.',
      false,
      { cause: error },
    );
  }
}

/** Walks up from this file, then from the working directory, to the folder with prisma.config.ts. */
export function findProjectRoot(): string {
  for (const start of [__dirname, process.cwd()]) {
    let dir = start;
    for (;;) {
      if (existsSync(join(dir, 'prisma.config.ts')) && existsSync(join(dir, 'prisma', 'migrations'))) return dir;
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  throw new PersistenceError(
    'migration_failed',
    `Cannot find prisma.config.ts and prisma/migrations above ${__dirname} or ${process.cwd()}; ` +
      'ship them with the application or pass projectRoot.',
  );
}

/** Replaces any postgres URL credentials (and the exact URL given) so output can be logged. */
export function redactConnectionStrings(text: string, connectionString?: string): string {
  let redacted = connectionString ? text.split(connectionString).join('[DATABASE_URL]') : text;
  redacted = redacted.replace(/(postgres(?:ql)?:\/\/)[^@\s/]+@/gi, '$1[redacted]@');
  return redacted;
}

interface CliRun {
  exitCode: number | null;
  output: string;
  timedOut: boolean;
  /** The CLI printed its success line and was then stopped by us. */
  finishedByMarker: boolean;
}

function runCli(
  cliPath: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; doneMarker: RegExp },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let finishedByMarker = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const onOutput = (chunk: Buffer) => {
      chunks.push(chunk);
      if (graceTimer || !options.doneMarker.test(Buffer.concat(chunks).toString('utf8'))) return;
      graceTimer = setTimeout(() => {
        finishedByMarker = true;
        child.kill('SIGTERM');
      }, EXIT_GRACE_MS);
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      clearTimeout(graceTimer);
      reject(new PersistenceError('migration_failed', `Could not run the Prisma CLI: ${error.message}`, false, { cause: error }));
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      clearTimeout(graceTimer);
      resolve({ exitCode, output: Buffer.concat(chunks).toString('utf8'), timedOut, finishedByMarker });
    });
  });
}
