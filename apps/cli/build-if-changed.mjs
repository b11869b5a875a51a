#!/usr/bin/env node
/**
 * `npm start`'s build step: builds the server and the console (`npm run build`) only when their
 * sources changed since the last build, so a restart with nothing changed starts in seconds
 * instead of rebuilding for a minute. The test suite calls it once before it spawns built servers.
 *
 * What counts as a source: every file the two builds read (apps/server, apps/console, libs, the
 * Prisma schema, the TypeScript, Nest and package files), spec files excepted. Their contents are
 * hashed (a few milliseconds for the whole tree); the hash of the last successful build is kept in
 * dist/.build-inputs. Plain JavaScript on purpose: it must run before anything is compiled.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOURCE_DIRS = ['apps/server', 'apps/console', 'libs'];
const SOURCE_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'nest-cli.json', 'prisma/schema.prisma'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git']);
const isSpec = (name) => /\.(e2e-)?spec\.ts$/.test(name);
const STAMP = join(ROOT, 'dist', '.build-inputs');
/** What a finished build leaves; a stamp without them (a half-deleted dist) means build again. */
const OUTPUTS = ['dist/apps/server/apps/server/src/main.js', 'dist/console/index.html'];

function sourceFiles() {
  const files = SOURCE_FILES.map((file) => join(ROOT, file)).filter((file) => existsSync(file));
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(join(dir, entry.name));
      } else if (entry.isFile() && !isSpec(entry.name)) {
        files.push(join(dir, entry.name));
      }
    }
  };
  for (const dir of SOURCE_DIRS) if (existsSync(join(ROOT, dir))) walk(join(ROOT, dir));
  return files.sort();
}

export function buildInputsHash() {
  const hash = createHash('sha256');
  for (const file of sourceFiles()) {
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

function upToDate(inputs) {
  if (!OUTPUTS.every((output) => existsSync(join(ROOT, output)))) return false;
  return existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === inputs;
}

function main() {
  const inputs = buildInputsHash();
  if (upToDate(inputs)) {
    console.log('build: server and console are up to date with their sources (dist/); not rebuilding');
    return 0;
  }
  console.log('build: sources changed since the last build (or no build yet): building the server and the console');
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) return build.status ?? 1;
  writeFileSync(STAMP, `${inputs}\n`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main();
