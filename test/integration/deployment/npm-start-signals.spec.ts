import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { eventually } from '../../support/eventually';
import { isProcessAlive } from '../../support/processes';

/**
 * `npm start` is how the README, systemd units and process managers run the server, and they stop
 * it with SIGTERM to the process they started: npm. npm passes the signal on to the shell that runs
 * the script, and a shell (dash) that runs `node …` as its child dies of it and leaves node running,
 * orphaned: no drain, no call records closed, the port still taken. The start script must exec node
 * so that the signal reaches the server. Checked with the project's own start script, run by the real
 * npm, against a stand-in for the built entry file (building the server here would take a minute).
 */
const ROOT = join(__dirname, '..', '..', '..');
const START_SCRIPT = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['start']!;

/** The stand-in: records its pid, and the signal when it comes, then exits as the drained server does. */
const STAND_IN = `
const { writeFileSync } = require('node:fs');
writeFileSync(process.env.STAND_IN_PID_FILE, String(process.pid));
process.on('SIGTERM', () => {
  writeFileSync(process.env.STAND_IN_SIGNAL_FILE, 'SIGTERM');
  setTimeout(() => process.exit(0), 100);
});
setInterval(() => undefined, 1000);
`;

describe('npm start', () => {
  let folder: string;
  let standInPid: number | undefined;

  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'switchboard-npm-start-'));
    standInPid = undefined;
  });

  afterEach(() => {
    if (standInPid !== undefined && isProcessAlive(standInPid)) process.kill(standInPid, 'SIGKILL');
    rmSync(folder, { recursive: true, force: true });
  });

  it('passes SIGTERM on to the server, which then drains and exits, and exits with it', async () => {
    const entry = /\bnode (\S+)/.exec(START_SCRIPT)?.[1];
    expect(entry).toBeDefined();
    mkdirSync(dirname(join(folder, entry!)), { recursive: true });
    writeFileSync(join(folder, entry!), STAND_IN);
    // The project's start script as it is; no prestart (the build), which the stand-in does not need.
    writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'npm-start-signals', version: '0.0.0', private: true, scripts: { start: START_SCRIPT } }));
    const pidFile = join(folder, 'pid');
    const signalFile = join(folder, 'signal');
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: folder,
      env: { ...process.env, STAND_IN_PID_FILE: pidFile, STAND_IN_SIGNAL_FILE: signalFile },
      stdio: 'ignore',
    });
    const npmExited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    await eventually(async () => existsSync(pidFile), (exists) => exists, 20_000);
    standInPid = Number(readFileSync(pidFile, 'utf8'));

    npm.kill('SIGTERM');
    const code = await Promise.race([npmExited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 10_000))]);
    expect(existsSync(signalFile) ? readFileSync(signalFile, 'utf8') : 'no signal reached the server').toBe('SIGTERM');
    expect(code).toBe(0);
    await eventually(async () => isProcessAlive(standInPid!), (alive) => !alive, 5_000);
  }, 40_000);
});
