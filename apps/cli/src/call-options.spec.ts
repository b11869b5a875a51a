import { CallUsageError, DTMF_KEY_SPACING_MS, parseCallCommand, parseDtmfSpec } from './call-options';

const ENV = { TWILIO_AUTH_TOKEN: 'token-from-env-0123456789', PUBLIC_BASE_URL: 'https://example.ngrok.app/' };
const BASE = ['--to', '+15550001111', '--wav', 'caller.wav'];

describe('parseCallCommand', () => {
  it('fills defaults from the environment', () => {
    expect(parseCallCommand(BASE, { ...ENV, PORT: '4000' })).toEqual({
      kind: 'run',
      options: {
        to: '+15550001111',
        from: '+15555550100',
        audioPath: 'caller.wav',
        serverUrl: 'http://127.0.0.1:4000',
        serverUrlFrom: 'PORT',
        publicBaseUrl: 'https://example.ngrok.app',
        authToken: 'token-from-env-0123456789',
        accountSid: undefined,
        outPath: 'agent.wav',
        receivedOutPath: undefined,
        afterAudio: { kind: 'await-reply', tailMs: 2000, timeoutMs: 30_000 },
        dtmf: [],
        statusCallbacks: true,
        json: false,
      },
    });
  });

  it('lets flags override the environment', () => {
    const parsed = parseCallCommand(
      [
        ...BASE,
        '--from', '+15550009999',
        '--server', 'http://10.0.0.2:3000/',
        '--public-base-url', 'https://voice.example.com',
        '--auth-token', 'flag-token',
        '--account-sid', 'AC' + 'a'.repeat(32),
        '--out', 'reply.wav',
        '--received-out', 'all.wav',
        '--trailing-silence-ms', '250',
        '--dtmf', '1@100', '--dtmf', '2#@900',
        '--no-status-callbacks', '--json',
      ],
      { ...ENV, TWILIO_ACCOUNT_SID: 'AC' + 'b'.repeat(32) },
    );
    expect(parsed.kind === 'run' && parsed.options).toMatchObject({
      from: '+15550009999',
      serverUrl: 'http://10.0.0.2:3000',
      serverUrlFrom: 'flag',
      publicBaseUrl: 'https://voice.example.com',
      authToken: 'flag-token',
      accountSid: 'AC' + 'a'.repeat(32),
      outPath: 'reply.wav',
      receivedOutPath: 'all.wav',
      afterAudio: { kind: 'trailing-silence', ms: 250 },
      dtmf: [
        { digit: '1', atMs: 100 },
        { digit: '2', atMs: 900 },
        { digit: '#', atMs: 900 + DTMF_KEY_SPACING_MS },
      ],
      statusCallbacks: false,
      json: true,
    });
  });

  it('sends status callbacks as a number configured as the README says would get them, unless told not to; both flags at once is a usage error', () => {
    const explicit = parseCallCommand([...BASE, '--status-callbacks'], ENV);
    expect(explicit.kind === 'run' && explicit.options.statusCallbacks).toBe(true);
    expect(() => parseCallCommand([...BASE, '--status-callbacks', '--no-status-callbacks'], ENV)).toThrow(CallUsageError);
  });

  it('signs for what a server without PUBLIC_BASE_URL checks against (http://localhost:<port>) when PUBLIC_BASE_URL is unset', () => {
    const parsed = parseCallCommand([...BASE, '--server', 'http://127.0.0.1:3111'], { TWILIO_AUTH_TOKEN: 't' });
    expect(parsed.kind === 'run' && parsed.options.publicBaseUrl).toBe('http://localhost:3111');
    const onDefaults = parseCallCommand(BASE, { TWILIO_AUTH_TOKEN: 't' });
    expect(onDefaults.kind === 'run' && onDefaults.options.serverUrl).toBe('http://127.0.0.1:3000');
    expect(onDefaults.kind === 'run' && onDefaults.options.publicBaseUrl).toBe('http://localhost:3000');
  });

  it('waits for the reply by default, as long as the flags say; --trailing-silence-ms keeps a fixed silence instead', () => {
    const tuned = parseCallCommand([...BASE, '--reply-tail-ms', '500', '--reply-timeout-ms', '60000'], ENV);
    expect(tuned.kind === 'run' && tuned.options.afterAudio).toEqual({ kind: 'await-reply', tailMs: 500, timeoutMs: 60_000 });
    const fixed = parseCallCommand([...BASE, '--trailing-silence-ms', '1500'], ENV);
    expect(fixed.kind === 'run' && fixed.options.afterAudio).toEqual({ kind: 'trailing-silence', ms: 1500 });
  });

  it("dials the port a server started with this shell's PORT listens on, read as the server reads it", () => {
    const dialled = (env: NodeJS.ProcessEnv) => {
      const parsed = parseCallCommand(BASE, { ...ENV, ...env });
      return parsed.kind === 'run' && [parsed.options.serverUrl, parsed.options.serverUrlFrom];
    };
    expect(dialled({ PORT: '4100' })).toEqual(['http://127.0.0.1:4100', 'PORT']);
    // Unset or empty (the server treats an empty variable as unset): the server's default port.
    expect(dialled({})).toEqual(['http://127.0.0.1:3000', 'default']);
    expect(dialled({ PORT: '' })).toEqual(['http://127.0.0.1:3000', 'default']);
    // --server wins over PORT.
    expect(parseCallCommand([...BASE, '--server', 'http://127.0.0.1:5000'], { ...ENV, PORT: '4100' })).toMatchObject({ options: { serverUrl: 'http://127.0.0.1:5000' } });
  });

  it('returns help for --help', () => {
    expect(parseCallCommand(['--help'], {})).toEqual({ kind: 'help' });
  });

  it.each([
    ['a missing --to', ['--wav', 'a.wav'], ENV, /--to is required/],
    ['a missing --wav', ['--to', '+15550001111'], ENV, /--wav is required/],
    ['a number that is not E.164', ['--to', '5550001111', '--wav', 'a.wav'], ENV, /E\.164/],
    ['no auth token anywhere', BASE, {}, /TWILIO_AUTH_TOKEN/],
    ['a bad server URL', [...BASE, '--server', 'localhost:3000'], ENV, /--server must be an absolute/],
    ['a bad account SID', [...BASE, '--account-sid', 'AC123'], ENV, /AC followed by 32 hex/],
    ['a bad trailing silence', [...BASE, '--trailing-silence-ms=-5'], ENV, /whole number/],
    ['a fixed silence with a reply wait', [...BASE, '--trailing-silence-ms', '100', '--reply-tail-ms', '100'], ENV, /cannot go with --reply-tail-ms/],
    ['a bad reply tail', [...BASE, '--reply-tail-ms', '1.5'], ENV, /--reply-tail-ms must be a whole number/],
    ['a reply timeout of 0', [...BASE, '--reply-timeout-ms', '0'], ENV, /--reply-timeout-ms must be more than 0/],
    ['a PORT that is no port', BASE, { ...ENV, PORT: 'http' }, /PORT must be a port number from 1 to 65535, got "http"/],
    ['PORT=0 (a port the server picks)', BASE, { ...ENV, PORT: '0' }, /PORT=0 .*pass --server/],
    ['a bad DTMF spec', [...BASE, '--dtmf', '12x@5'], ENV, /--dtmf must look like/],
    ['an unknown flag', [...BASE, '--bogus'], ENV, /bogus/],
  ])('refuses %s with a CallUsageError', (_label, argv, env, message) => {
    expect(() => parseCallCommand(argv, env)).toThrow(CallUsageError);
    expect(() => parseCallCommand(argv, env)).toThrow(message);
  });
});

describe('parseDtmfSpec', () => {
  it('spaces the keys of one group', () => {
    expect(parseDtmfSpec('*0@0')).toEqual([
      { digit: '*', atMs: 0 },
      { digit: '0', atMs: DTMF_KEY_SPACING_MS },
    ]);
  });
});
