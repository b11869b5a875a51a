import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseStandInCommand, runStandInCommand } from './build-stand-in-models';

describe('npm run models:stand-ins', () => {
  it('parses size, models and output folder, refusing anything else', () => {
    expect(parseStandInCommand(['--out', '/tmp/x', '--size', 'realistic', '--models', 'whisper, piper'])).toEqual({
      outputDir: '/tmp/x',
      size: 'realistic',
      models: ['whisper', 'piper'],
    });
    expect(parseStandInCommand(['--help'])).toBe('help');
    expect(() => parseStandInCommand(['--size', 'huge'])).toThrow(/small or realistic/);
    expect(() => parseStandInCommand(['--models', 'gpt'])).toThrow(/--models takes/);
    expect(() => parseStandInCommand(['--bogus'])).toThrow();
  });

  it('builds the chosen models and lists them; a bad command line exits 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stand-in-cli-'));
    const lines: string[] = [];
    try {
      expect(await runStandInCommand(['--out', dir, '--models', 'smart-turn,piper'], (line) => lines.push(line))).toBe(0);
      expect(existsSync(join(dir, 'smart-turn-stand-in', 'smart-turn-stand-in.onnx'))).toBe(true);
      expect(existsSync(join(dir, 'piper-stand-in', 'en_US-stand-in-medium.onnx.json'))).toBe(true);
      expect(existsSync(join(dir, 'whisper-stand-in'))).toBe(false);
      expect(lines[0]).toMatch(/^Built small stand-in models \(smart-turn, piper\)/);
      const errors: string[] = [];
      expect(await runStandInCommand(['--size', 'huge'], () => undefined, (line) => errors.push(line))).toBe(2);
      expect(errors.join('\n')).toMatch(/usage: npm run models:stand-ins/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
