import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWav, writeWav } from '@switchboard/audio';
import { LoopbackMediaServer } from '@switchboard/testing';
import { runCallCommand } from './call.command';

// Runs the real command against a loopback server over real sockets, in real time (~0.5 s a call).
const AUTH_TOKEN = 'cli-test-auth-token-0123456789';
const PUBLIC_BASE_URL = 'https://public.example.test';
const FIXTURE_ULAW = join(__dirname, '../../../test/fixtures/speech/hours.8k.ulaw');

function tone(sampleRate: number, durationMs: number, frequencyHz = 440): Int16Array {
  const samples = new Int16Array(Math.round((sampleRate * durationMs) / 1000));
  for (let index = 0; index < samples.length; index += 1) {
    samples[index] = Math.round(8000 * Math.sin((2 * Math.PI * frequencyHz * index) / sampleRate));
  }
  return samples;
}

describe('npm run call (runCallCommand)', () => {
  let server: LoopbackMediaServer;
  let dir: string;
  let stdout: string[];
  let stderr: string[];
  const io = { out: (line: string) => stdout.push(line), err: (line: string) => stderr.push(line) };
  const env = () => ({ TWILIO_AUTH_TOKEN: AUTH_TOKEN, PUBLIC_BASE_URL });
  const args = (audioPath: string, ...extra: string[]) => [
    '--to', '+15550002222', '--wav', audioPath, '--server', server.url,
    '--out', join(dir, 'agent.wav'), '--trailing-silence-ms', '200', ...extra,
  ];

  beforeEach(async () => {
    stdout = [];
    stderr = [];
    dir = await mkdtemp(join(tmpdir(), 'switchboard-call-'));
    server = new LoopbackMediaServer({ authToken: AUTH_TOKEN, publicBaseUrl: PUBLIC_BASE_URL });
    await server.start();
  });

  afterEach(async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('resamples a 16 kHz WAV, saves the agent audio as an 8 kHz WAV and prints the summary', async () => {
    const input = join(dir, 'caller.16k.wav');
    await writeFile(input, writeWav({ samples: tone(16_000, 300), sampleRate: 16_000 }));

    const exitCode = await runCallCommand(args(input, '--json', '--received-out', join(dir, 'received.wav')), env(), io);
    expect(stderr).toEqual([]);
    expect(exitCode).toBe(0);

    const media = server.sessions[0]?.messages.filter((message) => message['event'] === 'media') ?? [];
    expect(media.length).toBeGreaterThanOrEqual(15 + 10); // 300 ms of audio + 200 ms of silence
    const agent = readWav(await readFile(join(dir, 'agent.wav')));
    expect(agent.sampleRate).toBe(8000);
    expect(agent.channelCount).toBe(1);
    expect(agent.samples.some((sample) => Math.abs(sample) > 4000)).toBe(true); // the echoed tone
    const received = readWav(await readFile(join(dir, 'received.wav')));
    expect(received.samples.length).toBeGreaterThan(0);

    const text = stdout.join('\n');
    expect(text).toContain('16000 Hz WAV, mono, resampled to 8000 Hz');
    expect(text).toMatch(/first echo .*\d+\.\d ms/);
    expect(text).toMatch(/frames sent \/ received\s+\d+ \/ \d+/);
    const json = JSON.parse(stdout[stdout.length - 1] ?? '{}') as Record<string, unknown>;
    // --trailing-silence-ms: no wait for the reply to report.
    expect(json).toMatchObject({ closedBy: 'caller', framesSent: media.length, protocolErrors: 0, replyWait: null });
    expect(text).not.toContain(AUTH_TOKEN);
  });

  it('sends a headerless mu-law file byte for byte', async () => {
    const fixture = await readFile(FIXTURE_ULAW);
    const input = join(dir, 'caller.ulaw');
    await writeFile(input, fixture.subarray(0, 2400)); // 300 ms
    expect(await runCallCommand(args(input), env(), io)).toBe(0);
    const media = server.sessions[0]?.messages.filter((message) => message['event'] === 'media') ?? [];
    const sent = Buffer.concat(media.map((message) => Buffer.from(message['media'].payload as string, 'base64')));
    expect(sent.subarray(0, 2400).equals(fixture.subarray(0, 2400))).toBe(true);
  });

  it('exits 1 with the spoken reason when the call is rejected', async () => {
    await server.stop();
    server = new LoopbackMediaServer({
      authToken: AUTH_TOKEN,
      publicBaseUrl: PUBLIC_BASE_URL,
      voiceTwiml: () => '<Response><Say>No agent is assigned to this number.</Say><Hangup/></Response>',
    });
    await server.start();
    const input = join(dir, 'caller.ulaw');
    await writeFile(input, new Uint8Array(160).fill(0x20));
    expect(await runCallCommand(args(input), env(), io)).toBe(1);
    expect(stderr.join('\n')).toMatch(/rejected call CA[0-9a-f]{32}, saying: "No agent is assigned to this number\."/);
  });

  it('exits 1 with a hint when the server refuses the signature', async () => {
    const input = join(dir, 'caller.ulaw');
    await writeFile(input, new Uint8Array(160).fill(0x20));
    expect(await runCallCommand(args(input), { ...env(), TWILIO_AUTH_TOKEN: 'some-other-token-000000' }, io)).toBe(1);
    expect(stderr.join('\n')).toMatch(/HTTP 403.*TWILIO_AUTH_TOKEN and PUBLIC_BASE_URL/);
    expect(stderr.join('\n')).not.toContain('some-other-token');
  });

  it('by default stays on the line until the reply has been heard to its end, and says so', async () => {
    const input = join(dir, 'caller.wav');
    await writeFile(input, writeWav({ samples: tone(8000, 300), sampleRate: 8000 }));
    const argv = ['--to', '+15550002222', '--wav', input, '--server', server.url, '--out', join(dir, 'agent.wav'), '--reply-tail-ms', '200'];
    expect(await runCallCommand(argv, env(), io)).toBe(0);
    expect(stdout.join('\n')).toMatch(/Heard the agent's reply to its end, then 0\.20 s of silence \(waited \d+\.\d\d s\)/);
    // The echo of the whole tone was heard: two thirds of a sine's samples lie above half its peak (1600 of 2400).
    const agent = readWav(await readFile(join(dir, 'agent.wav')));
    expect(agent.samples.filter((sample) => Math.abs(sample) > 4000).length).toBeGreaterThan(1500);
  });

  it('exits 1 with a clear message when the server is unreachable, naming the PORT it dialled', async () => {
    const input = join(dir, 'caller.ulaw');
    await writeFile(input, new Uint8Array(160).fill(0x20));
    const url = server.url;
    await server.stop();
    expect(await runCallCommand(['--to', '+15550002222', '--wav', input, '--server', url], env(), io)).toBe(1);
    expect(stderr.join('\n')).toMatch(/cannot reach the server at http:\/\/127\.0\.0\.1:\d+ .*ECONNREFUSED/);
    expect(stderr.join('\n')).not.toContain('PORT');
    const port = new URL(url).port;
    expect(await runCallCommand(['--to', '+15550002222', '--wav', input], { ...env(), PORT: port }, io)).toBe(1);
    expect(stderr.join('\n')).toContain(`PORT=${port} in this shell: a server started with another PORT needs the same PORT exported here`);
    server = new LoopbackMediaServer({ authToken: AUTH_TOKEN, publicBaseUrl: PUBLIC_BASE_URL });
    await server.start(); // for afterEach
  });

  it('exits 2 on unusable input audio or a bad command line', async () => {
    expect(await runCallCommand(args(join(dir, 'missing.wav')), env(), io)).toBe(2);
    expect(stderr[0]).toMatch(/Cannot read .*missing\.wav: no such file/);
    const notAudio = join(dir, 'notes.txt');
    await writeFile(notAudio, 'hello');
    expect(await runCallCommand(args(notAudio), env(), io)).toBe(2);
    expect(stderr.join('\n')).toMatch(/neither a WAV file nor headerless mu-law/);
    expect(await runCallCommand(['--wav', notAudio], env(), io)).toBe(2);
    expect(stderr.join('\n')).toMatch(/--to is required[\s\S]*Usage: npm run call/);
    expect(server.voiceRequests).toHaveLength(0);
  });
});
