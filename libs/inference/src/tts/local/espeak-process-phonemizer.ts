import { spawn } from 'node:child_process';
import { EngineError } from '../../contracts';
import type { Phonemizer } from './phonemizer';

export interface EspeakProcessPhonemizerOptions {
  /** The espeak-ng program; default 'espeak-ng' on PATH. */
  executable?: string;
  /** Longest one phonemization may take; default 5000 ms. */
  timeoutMs?: number;
}

const ENGINE = 'espeak-ng';

/**
 * IPA phonemes from the `espeak-ng` program, run as a separate process per sentence
 * (`espeak-ng -q --ipa=3 -v <voice>`, text on stdin). espeak-ng is GPL-3.0: running the installed
 * program keeps it out of this product's code (nothing is linked or bundled); installing it is
 * the operator's choice (`apt-get install espeak-ng`).
 * espeak drops punctuation from its phoneme output; the sentence's final mark is put back because
 * Kokoro and Piper use it for intonation.
 */
export class EspeakProcessPhonemizer implements Phonemizer {
  readonly name = 'espeak-ng-process';
  private readonly executable: string;
  private readonly timeoutMs: number;

  constructor(options: EspeakProcessPhonemizerOptions = {}) {
    this.executable = options.executable ?? 'espeak-ng';
    this.timeoutMs = options.timeoutMs ?? 5000;
  }

  /** Whether the program runs here (for choosing between this and the fallback at start-up). */
  static async isAvailable(executable = 'espeak-ng'): Promise<boolean> {
    return new Promise((resolve) => {
      const child = spawn(executable, ['--version'], { stdio: 'ignore' });
      child.once('error', () => resolve(false));
      child.once('exit', (code) => resolve(code === 0));
    });
  }

  async phonemize(text: string, options: { voice: string; signal?: AbortSignal }): Promise<string> {
    if (!/^[A-Za-z0-9_+-]{1,32}$/.test(options.voice)) {
      throw new EngineError(ENGINE, 'bad_request', `invalid espeak voice name ${JSON.stringify(options.voice)}`, false);
    }
    const stdout = await this.run(['-q', '--ipa=3', '-v', options.voice], text, options.signal);
    // --ipa=3 separates phonemes with '_': the models want them back to back, words and clauses
    // separated by one space.
    const phonemes = stdout.replace(/_/g, '').split(/\s+/).filter(Boolean).join(' ');
    const finalMark = /[.!?,;:]$/.exec(text.trim())?.[0] ?? '';
    return phonemes + finalMark;
  }

  private run(args: string[], input: string, signal: AbortSignal | undefined): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.executable, args, { stdio: ['pipe', 'pipe', 'pipe'], signal });
      const stdout: Buffer[] = [];
      const stderr: Buffer[] = [];
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new EngineError(ENGINE, 'timeout', `espeak-ng took longer than ${this.timeoutMs} ms`, true));
      }, this.timeoutMs);
      child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
      child.once('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (error.name === 'AbortError') reject(new EngineError(ENGINE, 'cancelled', 'phonemization cancelled', false));
        else if (error.code === 'ENOENT') reject(new EngineError(ENGINE, 'unavailable', `${this.executable} is not installed (apt-get install espeak-ng), or use PlainCharacterPhonemizer`, false, { cause: error }));
        else reject(new EngineError(ENGINE, 'inference_failed', `could not run ${this.executable}: ${error.message}`, false, { cause: error }));
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(Buffer.concat(stdout).toString('utf8'));
        else reject(new EngineError(ENGINE, 'inference_failed', `${this.executable} exited with ${code}: ${Buffer.concat(stderr).toString('utf8').trim().slice(0, 200)}`, false));
      });
      child.stdin.on('error', () => undefined);
      child.stdin.end(input);
    });
  }
}
