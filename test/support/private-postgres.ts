import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freeLoopbackPort } from '@switchboard/testing';

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of a test's own (initdb + pg_ctl from the machine's PostgreSQL packages, on a
 * free loopback port, trust auth), for tests that stop and restart the database under a running
 * server: the shared cluster on 5432 must never be stopped. Runs as the `postgres` user when the
 * tests run as root (PostgreSQL refuses to run as root).
 */
export interface PrivatePostgres {
  /** postgresql://postgres@127.0.0.1:PORT/postgres */
  url: string;
  /** Fast shutdown: open connections are cut, as in an outage. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its files. */
  destroy(): Promise<void>;
}

/** The directory of the newest installed PostgreSQL's programs, or null when there is none. */
export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const dir = join(root, version, 'bin');
    if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  return null;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('no PostgreSQL server programs under /usr/lib/postgresql (install postgresql)');
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-private-pg-'));
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
    chmodSync(dir, 0o700);
  }
  const pg = (program: string, args: string[]) =>
    asRoot ? run('su', ['postgres', '-s', '/bin/sh', '-c', [join(bin, program), ...args].map(shellQuote).join(' ')]) : run(join(bin, program), args);
  await pg('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const port = await freeLoopbackPort();
  const options = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories='' -c fsync=off -c max_connections=50`;
  const start = async () => {
    await pg('pg_ctl', ['-D', dataDir, '-l', logFile, '-o', options, '-w', '-t', '30', 'start']);
  };
  const stop = async () => {
    await pg('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', '30', 'stop']);
  };
  await start();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start,
    destroy: async () => {
      await stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

