import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/**
 * The project's documentation as a reader meets it: `README.md`, then the pages of `docs/` in the
 * order its contents page (`docs/README.md`) links them. The walkthrough test runs their shell blocks
 * in this order (a page may use the server and variables an earlier page left), and the documentation
 * checks read their links.
 */

export interface DocumentationPage {
  /** Path from the project root, with forward slashes: `README.md`, `docs/api.md`. */
  path: string;
  markdown: string;
}

export interface MarkdownLink {
  /** 1-based line of the link. */
  line: number;
  /** The link's target as written: `docs/api.md#keys`, `../README.md`, `https://...`. */
  target: string;
}

export const CONTENTS_PAGE = 'docs/README.md';

/** `README.md`, the contents page, the pages the contents page links (in its order), then any page it does not link. */
export function documentationPages(projectRoot: string): DocumentationPage[] {
  const read = (path: string): DocumentationPage => ({ path, markdown: readFileSync(join(projectRoot, path), 'utf8') });
  const contents = read(CONTENTS_PAGE);
  const linked = markdownLinks(contents.markdown)
    .map((link) => resolveLink(CONTENTS_PAGE, link.target))
    .filter((resolved): resolved is ResolvedLink => resolved !== undefined)
    .map((resolved) => resolved.path)
    .filter((path) => path.startsWith('docs/') && path.endsWith('.md') && path !== CONTENTS_PAGE && existsSync(join(projectRoot, path)));
  const all = docsPagePaths(projectRoot);
  const ordered = [...new Set(linked)];
  const unlinked = all.filter((path) => !ordered.includes(path));
  return [read('README.md'), contents, ...[...ordered, ...unlinked].map(read)];
}

/** Every `docs/*.md` page but the contents page, sorted. */
export function docsPagePaths(projectRoot: string): string[] {
  return readdirSync(join(projectRoot, 'docs'))
    .filter((name) => name.endsWith('.md') && name !== 'README.md')
    .sort()
    .map((name) => `docs/${name}`);
}

/** Inline links and images (`[text](target)`, `![alt](target)`) outside code blocks and code spans. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  proseLines(markdown).forEach(({ line, text }) => {
    const withoutCode = text.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length));
    for (const match of withoutCode.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line, target: match[1] as string });
    }
  });
  return links;
}

/** The anchors GitHub gives a page's headings (github-slugger's rule: lowercase, punctuation dropped, spaces to hyphens, repeats numbered). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const slug = headingSlug(heading[1] as string);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

export function headingSlug(headingText: string): string {
  return headingText
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

export interface ResolvedLink {
  /** The linked file, from the project root (posix separators). */
  path: string;
  anchor?: string;
}

/**
 * Where a relative link on a page points, from the project root; undefined for links that leave the
 * repository's files (a scheme such as https: or mailto:).
 */
export function resolveLink(pagePath: string, target: string): ResolvedLink | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const [file = '', anchor] = target.split('#', 2);
  const path = file === '' ? pagePath : posix.normalize(posix.join(posix.dirname(pagePath), decodeURI(file)));
  return { path, ...(anchor !== undefined ? { anchor: decodeURIComponent(anchor) } : {}) };
}

/** The lines that are prose (not inside a fenced code block), with their 1-based numbers. */
export function proseLines(markdown: string): { line: number; text: string }[] {
  const lines: { line: number; text: string }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && text.trim() === marker) fence = undefined;
      return;
    }
    if (marker !== undefined) {
      fence = marker;
      return;
    }
    lines.push({ line: index + 1, text });
  });
  return lines;
}
