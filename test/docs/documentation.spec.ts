/**
 * The documentation stays navigable for a newcomer: a short README that points into docs/, a contents
 * page that links every page, and no link that leads nowhere (moving a section breaks `#anchor` links
 * silently otherwise). These read the files as committed; nothing is started.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  CONTENTS_PAGE,
  docsPagePaths,
  documentationPages,
  headingAnchors,
  headingSlug,
  markdownLinks,
  proseLines,
  resolveLink,
} from '../support/documentation-pages';

const PROJECT_ROOT = join(__dirname, '..', '..');
const README_MAX_LINES = 300;
/** Longer lines are walls of text or table rows nobody can read; say it in a list instead. */
const PROSE_LINE_MAX_CHARS = 400;
/** Screenshots the console's browser test writes (test/e2e/console-browser.e2e-spec.ts); a clone does not have them. */
const GENERATED_ARTIFACTS = 'test/artifacts/';

const pages = documentationPages(PROJECT_ROOT);
const markdownOf = new Map(pages.map((page) => [page.path, page.markdown]));

describe('documentation', () => {
  it(`README.md has at most ${README_MAX_LINES} lines`, () => {
    const readme = markdownOf.get('README.md') ?? '';
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('the README links the contents page, and the contents page links every docs page', () => {
    const readmeTargets = markdownLinks(markdownOf.get('README.md') ?? '').map((link) => resolveLink('README.md', link.target)?.path);
    expect(readmeTargets).toContain(CONTENTS_PAGE);
    const linkedFromContents = new Set(
      markdownLinks(markdownOf.get(CONTENTS_PAGE) ?? '').map((link) => resolveLink(CONTENTS_PAGE, link.target)?.path),
    );
    expect(docsPagePaths(PROJECT_ROOT).filter((path) => !linkedFromContents.has(path))).toEqual([]);
  });

  it('every relative link in README.md and docs/*.md points at a file that exists, and at a heading that exists', () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const link of markdownLinks(page.markdown)) {
        const resolved = resolveLink(page.path, link.target);
        if (!resolved) continue;
        const where = `${page.path}:${link.line}: ${link.target}`;
        if (resolved.path.startsWith(GENERATED_ARTIFACTS)) {
          if (!/^test\/artifacts\/console-[a-z0-9-]+\.png$/.test(resolved.path)) broken.push(`${where} (not a console screenshot the browser test writes)`);
          continue;
        }
        const file = join(PROJECT_ROOT, resolved.path);
        if (resolved.path.startsWith('../') || !existsSync(file)) {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (resolved.anchor === undefined || !resolved.path.endsWith('.md') || statSync(file).isDirectory()) continue;
        const target = markdownOf.get(resolved.path);
        if (target !== undefined && !headingAnchors(target).has(resolved.anchor)) broken.push(`${where} (no heading with that anchor)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it(`no line of prose or table in README.md and docs/*.md is longer than ${PROSE_LINE_MAX_CHARS} characters`, () => {
    const long = pages.flatMap((page) =>
      proseLines(page.markdown)
        .filter(({ text }) => text.length > PROSE_LINE_MAX_CHARS)
        .map(({ line, text }) => `${page.path}:${line}: ${text.length} characters`),
    );
    expect(long).toEqual([]);
  });
});

describe('documentation helpers', () => {
  it('give headings the anchors GitHub gives them', () => {
    expect(headingSlug('Load benchmark (`npm run bench:load`)')).toBe('load-benchmark-npm-run-benchload');
    expect(headingSlug('Dial it without Twilio: the simulated caller')).toBe('dial-it-without-twilio-the-simulated-caller');
    expect(headingSlug('Moving from `SWITCHBOARD_SECRET_*` environment variables')).toBe('moving-from-switchboard_secret_-environment-variables');
    expect(headingSlug('See [the API](api.md)')).toBe('see-the-api');
    expect([...headingAnchors('# Tests\n\n```sh\n# not a heading\n```\n\n## Tests\n')]).toEqual(['tests', 'tests-1']);
  });

  it('find links in prose only, and resolve them from their page', () => {
    const markdown = ['See [a](a.md#x) and ![b](../b.png "title").', '`[not](a link)`', '```', '[nor](this.md)', '```', '<https://x> [c](https://example.com)'].join('\n');
    expect(markdownLinks(markdown)).toEqual([
      { line: 1, target: 'a.md#x' },
      { line: 1, target: '../b.png' },
      { line: 6, target: 'https://example.com' },
    ]);
    expect(resolveLink('docs/api.md', 'a.md#x')).toEqual({ path: 'docs/a.md', anchor: 'x' });
    expect(resolveLink('docs/api.md', '../README.md')).toEqual({ path: 'README.md' });
    expect(resolveLink('docs/api.md', '#errors')).toEqual({ path: 'docs/api.md', anchor: 'errors' });
    expect(resolveLink('README.md', 'https://example.com')).toBeUndefined();
  });
});
