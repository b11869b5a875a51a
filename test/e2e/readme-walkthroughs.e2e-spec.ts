/**
 * Every shell block of the documentation runs as written (issue: "every command block in the README
 * runs as written on a fresh clone"). The blocks come from README.md and then every docs/*.md page, in
 * the order the contents page (docs/README.md) lists them (test/support/documentation-pages.ts): the
 * quick start's server is started by the README, and the walkthroughs of the pages after it use the
 * server and the variables an earlier page left, as a reader's terminal would. Each block is annotated
 * with how it is run here (test/support/readme-blocks.ts); a block without an annotation fails this
 * test, so a new one cannot slip past. They run with bash in a copy of the checkout as a fresh clone has it
 * (installed, nothing built, no ./data), against a fresh database of their own: the quick start's
 * `npm start` (which builds), the simulated caller, and the curl walkthroughs, with PORT, DATABASE_URL
 * and DATA_DIR set the way a reader may set them. Blocks that need what this machine cannot have (a
 * Twilio account, a public tunnel, Docker) say so in their annotation and are not run.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '@switchboard/testing';
import { createScratchDatabase, type ScratchDatabase } from '../support/database';
import { documentationPages } from '../support/documentation-pages';
import { parseAnnotation, parseReadme, type ReadmeBlock } from '../support/readme-blocks';
import { cloneLikeCheckout, ReadmeRunner, removeCheckout } from '../support/readme-runner';

jest.setTimeout(420_000);

const PROJECT_ROOT = join(__dirname, '..', '..');
/** Every page's blocks, README.md first, then the docs pages in the contents page's order, and every page's problems as `page:line: message`. */
function parseDocumentation(): { blocks: ReadmeBlock[]; problems: string[] } {
  const blocks: ReadmeBlock[] = [];
  const problems: string[] = [];
  for (const page of documentationPages(PROJECT_ROOT)) {
    const parsed = parseReadme(page.markdown, page.path);
    blocks.push(...parsed.blocks);
    problems.push(...parsed.problems.map((problem) => `${page.path}:${problem.line}: ${problem.message}`));
  }
  return { blocks, problems };
}

/** `npm start` builds the server and the console first (about 20 s here), then starts. */
const SERVER_READY_MS = 240_000;
const RUN_BLOCK_MS = 120_000;

describe('documentation command blocks: annotations', () => {
  it('every shell block in README.md and docs/*.md says how the README test runs it', () => {
    const { blocks, problems } = parseDocumentation();
    expect(problems).toEqual([]);
    expect(blocks.filter((block) => block.mode !== 'skip').length).toBeGreaterThanOrEqual(4);
    // The quick start is the README's own: the server every later walkthrough starts from.
    expect(blocks.find((block) => block.mode !== 'skip')).toMatchObject({ page: 'README.md', mode: 'background' });
  });

  it('every shell block, skipped ones too, is valid bash (bash -n)', () => {
    const invalid = parseDocumentation()
      .blocks.map((block) => ({ block, check: spawnSync('bash', ['-n'], { input: block.text, encoding: 'utf8' }) }))
      .filter(({ check }) => check.status !== 0)
      .map(({ block, check }) => `${block.page}:${block.line}: ${check.stderr.trim()}`);
    expect(invalid).toEqual([]);
  });

  it('finds a block without an annotation, a skip without a reason, and a stale "without" line', () => {
    const markdown = [
      '```sh',
      'echo unannotated',
      '```',
      '<!-- readme-test: skip -->',
      '```bash',
      'echo no reason',
      '```',
      '<!-- readme-test: run, without "npm ci" -->',
      '',
      '```sh',
      'npm start',
      '```',
      '<!-- readme-test: run -->',
      '```json',
      '{}',
      '```',
      '```',
      'plain output needs no annotation',
      '```',
    ].join('\n');
    expect(parseReadme(markdown).problems).toEqual([
      { line: 1, message: expect.stringContaining('has no <!-- readme-test') },
      { line: 4, message: expect.stringContaining('needs its reason') },
      { line: 8, message: 'without "npm ci": the block has no such line' },
      { line: 13, message: expect.stringContaining('precedes a ```json block') },
    ]);
  });

  it('reads modes, options and reasons', () => {
    expect(parseAnnotation(' background, without "npm ci", expect "first run: open" (installed already) ')).toEqual({
      mode: 'background',
      without: ['npm ci'],
      expect: ['first run: open'],
      reason: 'installed already',
    });
    expect(parseAnnotation('skip (needs a Twilio account)')).toEqual({ mode: 'skip', without: [], expect: [], reason: 'needs a Twilio account' });
    expect(parseAnnotation('walk')).toMatch(/mode must be run, background or skip/);
    expect(parseAnnotation('run, retry 3')).toMatch(/unknown option/);
  });
});

describe('documentation walkthroughs run as written (e2e: bash in a clone-like checkout, the server built and started by npm start)', () => {
  let checkout: string;
  let workDir: string;
  let dataDir: string;
  let database: ScratchDatabase;
  let runner: ReadmeRunner;

  beforeAll(async () => {
    checkout = cloneLikeCheckout(PROJECT_ROOT, { withBuild: true });
    workDir = mkdtempSync(join(tmpdir(), 'switchboard-readme-shell-'));
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-readme-data-'));
    // An empty database of its own: the server migrates it at start-up, as on a first run.
    database = await createScratchDatabase('readme');
    runner = new ReadmeRunner({ checkout, port: await freeLoopbackPort(), databaseUrl: database.url, dataDir, workDir });
  });

  afterAll(async () => {
    await runner?.stop();
    await database?.drop();
    if (checkout) removeCheckout(checkout);
    for (const folder of [workDir, dataDir]) if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('runs every block not marked skip, README first, then the docs pages in contents order', async () => {
    const { blocks, problems } = parseDocumentation();
    expect(problems).toEqual([]);
    for (const block of blocks) {
      if (block.mode === 'skip') continue;
      const outcome = block.mode === 'background' ? await runner.start(block, SERVER_READY_MS) : await runner.run(block, RUN_BLOCK_MS);
      // README_TEST_LOG=1 shows what each block printed (a failing block always does).
      if (process.env['README_TEST_LOG'] === '1') console.log(`${block.page}:${block.line} (${block.mode}):\n${outcome.output.slice(-6000)}`);
    }
  });
});
