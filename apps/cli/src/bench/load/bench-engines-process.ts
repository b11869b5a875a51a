import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** The OpenAI-compatible fakes of bench-engines.ts in a process of their own (off the bench's event loop). */
export async function startBenchEnginesProcess(): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = fork(join(__dirname, 'bench-engines.main.ts'), [], { execArgv: ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'] });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { baseUrl: string }) => resolve(message.baseUrl));
    child.once('exit', (code) => reject(new Error(`the fake engines exited (code ${code})`)));
  });
  return { child, baseUrl };
}
