import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { runnableText, type ReadmeBlock } from './readme-blocks';

/**
 * Runs the documentation's command blocks with bash, the way a reader types them: `run` blocks one after the
 * other in one "terminal" (variables a block sets are there for the next ones), each starting in the
 * checkout's root; a `background` block is a server in a terminal of its own (a fresh environment),
 * ready once /health answers, and starting another one stops it first (Ctrl-C). Every block runs with
 * `set -eo pipefail` and curl's `--fail-with-body` (a .curlrc in CURL_HOME), so a failing command or an
 * HTTP error answer fails the block rather than scroll past.
 */

/** Paths a fresh clone does not have (git-ignored build outputs and local state), never copied. */
const NOT_IN_A_CLONE = ['.git', 'node_modules', 'dist', 'data', 'models', 'coverage', 'test/artifacts', '.env'];

export interface BlockOutcome {
  block: ReadmeBlock;
  code: number | null;
  output: string;
}

export class ReadmeBlockFailure extends Error {
  override readonly name = 'ReadmeBlockFailure';
}

/** The failure message: where the block is, what was run, how it ended and what it printed. */
export function describeFailure(outcome: BlockOutcome, why: string): string {
  const ran = runnableText(outcome.block);
  return [
    `${outcome.block.page}:${outcome.block.line}: the ${outcome.block.mode} block ${why} (exit code ${outcome.code ?? 'none: still running or killed'})`,
    '--- the block, as run ---',
    ran,
    ...(outcome.block.without.length > 0 ? [`(not run, by its annotation: ${outcome.block.without.map((line) => JSON.stringify(line)).join(', ')})`] : []),
    '--- its output (last 8000 characters) ---',
    outcome.output.slice(-8000),
  ].join('\n');
}

/**
 * A copy of the working tree as a fresh clone has it (no build outputs, no ./data, no ./models),
 * already installed: node_modules is linked and the generated Prisma client is copied, which is what
 * `npm ci` would have left. Uncommitted changes are included (they are what is being tested).
 */
export function cloneLikeCheckout(projectRoot: string, options: { withBuild?: boolean } = {}): string {
  const checkout = mkdtempSync(join(tmpdir(), 'switchboard-readme-'));
  cpSync(projectRoot, checkout, {
    recursive: true,
    filter: (source) => {
      const path = relative(projectRoot, source);
      return !NOT_IN_A_CLONE.some((ignored) => path === ignored || path.startsWith(`${ignored}/`)) && !path.endsWith('.log');
    },
  });
  symlinkSync(join(projectRoot, 'node_modules'), join(checkout, 'node_modules'), 'dir');
  // withBuild: the build the test run made of these same sources (test/support/global-setup.ts runs
  // `npm start`'s build step on a fresh clone), with its stamp, so the walkthrough's `npm start` finds
  // it up to date as on a clone that was started once, instead of spending a minute building it again.
  if (options.withBuild) cpSync(join(projectRoot, 'dist'), join(checkout, 'dist'), { recursive: true });
  return checkout;
}

export interface ReadmeRunnerOptions {
  checkout: string;
  /** The server's port: the README's commands follow PORT. */
  port: number;
  databaseUrl: string;
  dataDir: string;
  /** Scratch folder for the runner's own files (block scripts, shell state, .curlrc). */
  workDir: string;
}

export class ReadmeRunner {
  private readonly stateFile: string;
  private readonly env: NodeJS.ProcessEnv;
  private background: { child: ChildProcess; outcome: BlockOutcome } | undefined;
  private blocks = 0;

  constructor(private readonly options: ReadmeRunnerOptions) {
    mkdirSync(options.workDir, { recursive: true });
    this.stateFile = join(options.workDir, 'state.sh');
    writeFileSync(this.stateFile, '');
    writeFileSync(join(options.workDir, '.curlrc'), 'fail-with-body\nshow-error\n');
    // A reader's shell: their PATH and HOME, and nothing of this test process (NODE_ENV=test, the test
    // database, keys). The server's documented settings choose a free port, the run's database and data.
    this.env = {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      LANG: process.env['LANG'] ?? 'C.UTF-8',
      TMPDIR: tmpdir(),
      PORT: String(options.port),
      DATABASE_URL: options.databaseUrl,
      DATA_DIR: options.dataDir,
      CURL_HOME: options.workDir,
    };
  }

  /** Runs a `run` block to its end in the shared terminal; throws a ReadmeBlockFailure describing it. */
  async run(block: ReadmeBlock, timeoutMs: number): Promise<BlockOutcome> {
    const script = this.script(block, true);
    const child = spawn('bash', [script], { cwd: this.options.checkout, env: this.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const outcome: BlockOutcome = { block, code: null, output: '' };
    collect(child, outcome);
    const exited = await exitWithin(child, timeoutMs);
    if (!exited) {
      killGroup(child, 'SIGKILL');
      throw new ReadmeBlockFailure(describeFailure(outcome, `did not finish within ${timeoutMs / 1000} s`));
    }
    outcome.code = child.exitCode;
    if (outcome.code !== 0) throw new ReadmeBlockFailure(describeFailure(outcome, 'failed'));
    const missing = block.expect.filter((text) => !outcome.output.includes(text));
    if (missing.length > 0) throw new ReadmeBlockFailure(describeFailure(outcome, `did not print ${missing.map((text) => JSON.stringify(text)).join(', ')}`));
    return outcome;
  }

  /**
   * Starts a `background` block (after stopping the previous one) and waits until the server answers
   * /health and has printed what the block expects.
   */
  async start(block: ReadmeBlock, timeoutMs: number): Promise<BlockOutcome> {
    await this.stop();
    const script = this.script(block, false);
    const child = spawn('bash', [script], { cwd: this.options.checkout, env: this.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const outcome: BlockOutcome = { block, code: null, output: '' };
    collect(child, outcome);
    this.background = { child, outcome };
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        outcome.code = child.exitCode;
        this.background = undefined;
        throw new ReadmeBlockFailure(describeFailure(outcome, 'exited before its server was ready'));
      }
      if ((await this.healthy()) && block.expect.every((text) => outcome.output.includes(text))) return outcome;
      if (Date.now() > deadline) {
        const missing = block.expect.filter((text) => !outcome.output.includes(text));
        const why = missing.length > 0 ? `did not print ${missing.map((text) => JSON.stringify(text)).join(', ')}` : `did not answer /health on port ${this.options.port}`;
        throw new ReadmeBlockFailure(describeFailure(outcome, `${why} within ${timeoutMs / 1000} s`));
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Stops the running background block, as Ctrl-C in its terminal would (SIGINT to its process group). */
  async stop(): Promise<void> {
    const running = this.background;
    this.background = undefined;
    if (!running || running.child.exitCode !== null || running.child.signalCode !== null) return;
    killGroup(running.child, 'SIGINT');
    if (!(await exitWithin(running.child, 40_000))) {
      killGroup(running.child, 'SIGKILL');
      await exitWithin(running.child, 5_000);
    }
  }

  /** What the background block has printed so far. */
  backgroundOutput(): string {
    return this.background?.outcome.output ?? '';
  }

  private async healthy(): Promise<boolean> {
    try {
      return (await fetch(`http://127.0.0.1:${this.options.port}/health`, { signal: AbortSignal.timeout(2_000) })).ok;
    } catch {
      return false;
    }
  }

  /**
   * The block as a bash script: a `run` block starts from the variables earlier `run` blocks left and
   * leaves its own for the next; a background block starts from the reader's plain environment.
   */
  private script(block: ReadmeBlock, shared: boolean): string {
    const number = ++this.blocks;
    const pageName = block.page.replace(/[^A-Za-z0-9.-]+/g, '-');
    const blockFile = join(this.options.workDir, `block-${number}-${pageName}-line-${block.line}.sh`);
    writeFileSync(blockFile, `${runnableText(block)}\n`);
    const scriptFile = join(this.options.workDir, `run-${number}.sh`);
    const lines = [
      ...(shared ? [`source ${quote(this.stateFile)}`] : []),
      `cd ${quote(this.options.checkout)}`,
      'set -eo pipefail',
      `source ${quote(blockFile)}`,
      'set +eo pipefail',
      ...(shared ? [SAVE_STATE, `__readme_save_state > ${quote(`${this.stateFile}.next`)} && mv ${quote(`${this.stateFile}.next`)} ${quote(this.stateFile)}`] : []),
    ];
    writeFileSync(scriptFile, `${lines.join('\n')}\n`);
    return scriptFile;
  }
}

/** Writes every shell variable a reader's later commands could use, except bash's own. */
const SAVE_STATE = `__readme_save_state() {
  local name
  for name in $(compgen -v); do
    case "$name" in
      BASH*|COMP_*|COLUMNS|DIRSTACK|EPOCH*|EUID|FUNCNAME|GROUPS|HIST*|HOSTNAME|HOSTTYPE|IFS|LINENO|LINES|MACHTYPE|OLDPWD|OPT*|OSTYPE|PIPESTATUS|PPID|PS1|PS2|PS4|PWD|RANDOM|SECONDS|SHELL|SHELLOPTS|SHLVL|SRANDOM|UID|_|__*|name) continue ;;
    esac
    declare -p "$name"
  done
}`;

function quote(path: string): string {
  return `'${path.replace(/'/g, `'\\''`)}'`;
}

function collect(child: ChildProcess, outcome: BlockOutcome): void {
  const keep = (chunk: Buffer) => (outcome.output += chunk.toString());
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
}

function exitWithin(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Signals the block's whole process group (bash, npm, node and the server's workers). */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** Removes the copy; its node_modules link goes first, so nothing can reach the linked folder. */
export function removeCheckout(checkout: string): void {
  const link = join(checkout, 'node_modules');
  if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(link);
  rmSync(checkout, { recursive: true, force: true });
}
