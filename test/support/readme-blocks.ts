/**
 * The documentation's shell command blocks (README.md and every docs/*.md page) and how the README
 * test runs each one. Every ```sh block (also bash/shell/console/zsh) must be preceded, on the line
 * before its fence (blank lines allowed), by an annotation:
 *
 *   <!-- readme-test: run -->            runs to completion; must exit 0
 *   <!-- readme-test: background -->     starts a long-running server; ready once /health answers
 *   <!-- readme-test: skip (why) -->     not run here; the reason is required
 *
 * with options after the mode, separated by commas:
 *   without "LINE"   that exact line of the block is not run (it must be in the block)
 *   expect "TEXT"    the block's output must contain TEXT (for a background block: before it is ready)
 * and an optional reason in parentheses at the end, e.g.
 *   <!-- readme-test: background, without "npm ci" (the checkout is installed already) -->
 */

export type ReadmeBlockMode = 'run' | 'background' | 'skip';

export interface ReadmeBlock {
  /** The page the block is on, from the project root: `README.md`, `docs/api.md`. */
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  /** The block's text as written, without the fences. */
  text: string;
  mode: ReadmeBlockMode;
  without: string[];
  expect: string[];
  reason?: string;
}

export interface ReadmeProblem {
  line: number;
  message: string;
}

export interface ParsedReadme {
  blocks: ReadmeBlock[];
  problems: ReadmeProblem[];
}

/** Fence info strings that mean "commands to type into a shell". */
export const SHELL_LANGUAGES: ReadonlySet<string> = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);

const ANNOTATION = /^<!--\s*readme-test:(.*?)-->\s*$/;
const FENCE = /^(\s{0,3})(`{3,}|~{3,})(.*)$/;

interface Annotation {
  line: number;
  mode: ReadmeBlockMode;
  without: string[];
  expect: string[];
  reason?: string;
}

/** Reads one annotation's body (the text after `readme-test:`); a string is what is wrong with it. */
export function parseAnnotation(body: string): Omit<Annotation, 'line'> | string {
  let rest = body.trim();
  let reason: string | undefined;
  const reasonMatch = /\(([^()]*)\)\s*$/.exec(rest);
  if (reasonMatch) {
    reason = (reasonMatch[1] ?? '').trim();
    rest = rest.slice(0, reasonMatch.index).trim();
  }
  const [modeText = '', ...options] = splitOptions(rest);
  if (modeText !== 'run' && modeText !== 'background' && modeText !== 'skip') {
    return `the mode must be run, background or skip, not "${modeText}"`;
  }
  const annotation: Omit<Annotation, 'line'> = { mode: modeText, without: [], expect: [], ...(reason ? { reason } : {}) };
  for (const option of options) {
    const match = /^(without|expect)\s+"([^"]+)"$/.exec(option);
    if (!match) return `unknown option "${option}" (options: without "LINE", expect "TEXT")`;
    (match[1] === 'without' ? annotation.without : annotation.expect).push(match[2] as string);
  }
  if (annotation.mode === 'skip' && !annotation.reason) return 'a skipped block needs its reason in parentheses: skip (needs ...)';
  if (annotation.mode === 'skip' && options.length > 0) return 'a skipped block takes no options';
  return annotation;
}

/** Splits on commas outside double quotes. */
function splitOptions(text: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    if (char === ',' && !quoted) {
      parts.push(current.trim());
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current.trim());
  return parts.filter((part) => part.length > 0);
}

/** A page's shell blocks with their annotations, and every block or annotation that breaks the rules. */
export function parseReadme(markdown: string, page = 'README.md'): ParsedReadme {
  const lines = markdown.split('\n');
  const blocks: ReadmeBlock[] = [];
  const problems: ReadmeProblem[] = [];
  let pending: Annotation | undefined;

  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    const annotation = ANNOTATION.exec(line.trim());
    if (annotation) {
      if (pending) problems.push({ line: pending.line, message: 'this readme-test annotation is not followed by a shell block' });
      const parsed = parseAnnotation(annotation[1] ?? '');
      if (typeof parsed === 'string') {
        problems.push({ line: index + 1, message: parsed });
        // The block it annotates is reported through this problem, not again as unannotated.
        pending = { line: index + 1, mode: 'skip', without: [], expect: [], reason: 'invalid annotation' };
      } else {
        pending = { line: index + 1, ...parsed };
      }
      continue;
    }
    const fence = FENCE.exec(line);
    if (!fence) {
      if (pending && line.trim() !== '') {
        problems.push({ line: pending.line, message: 'a readme-test annotation must come right before its block (only blank lines between)' });
        pending = undefined;
      }
      continue;
    }
    const marker = fence[2] as string;
    const language = (fence[3] ?? '').trim().split(/\s+/)[0]?.toLowerCase() ?? '';
    const start = index;
    const body: string[] = [];
    index++;
    while (index < lines.length && !new RegExp(`^\\s{0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}\\s*$`).test(lines[index] as string)) {
      body.push(lines[index] as string);
      index++;
    }
    if (!SHELL_LANGUAGES.has(language)) {
      if (pending) problems.push({ line: pending.line, message: `a readme-test annotation precedes a \`\`\`${language || '(no language)'} block, which is not run` });
      pending = undefined;
      continue;
    }
    const text = body.join('\n');
    if (!pending) {
      problems.push({ line: start + 1, message: `this \`\`\`${language} block has no <!-- readme-test: run | background | skip (why) --> annotation before it` });
      continue;
    }
    const textLines = body.map((bodyLine) => bodyLine.trim());
    for (const omitted of pending.without) {
      if (!textLines.includes(omitted.trim())) problems.push({ line: pending.line, message: `without "${omitted}": the block has no such line` });
    }
    blocks.push({
      page,
      line: start + 1,
      language,
      text,
      mode: pending.mode,
      without: pending.without,
      expect: pending.expect,
      ...(pending.reason ? { reason: pending.reason } : {}),
    });
    pending = undefined;
  }
  if (pending) problems.push({ line: pending.line, message: 'this readme-test annotation is not followed by a shell block' });
  return { blocks, problems };
}

/** What is run of a block: its text without the lines its annotation leaves out. */
export function runnableText(block: ReadmeBlock): string {
  const omitted = new Set(block.without.map((line) => line.trim()));
  return block.text
    .split('\n')
    .filter((line) => !omitted.has(line.trim()))
    .join('\n');
}
