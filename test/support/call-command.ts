import { spawn } from 'node:child_process';

/**
 * The command `npm run call` runs (apps/cli/src/call.command.ts), in a process of its own, as a user
 * starts it, with the test run's environment less PUBLIC_BASE_URL (which the simulated caller would
 * dial instead of the server under test) plus `env`; resolves with its exit code and what it printed.
 */
export function runCallCommand(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const inherited = { ...process.env };
  delete inherited['PUBLIC_BASE_URL'];
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/cli/src/call.command.ts', ...args], {
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}
