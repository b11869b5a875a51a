import { AgentConfigSchema, ToolConfigSchema } from './agent-config.schema';
import { AgentConfigError, parseAgentConfig } from './parse-agent-config';

function problemsOf(input: unknown): { path: string; message: string }[] {
  try {
    parseAgentConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(AgentConfigError);
    return (error as AgentConfigError).problems;
  }
  throw new Error('expected the config to be rejected');
}

describe('parseAgentConfig', () => {
  it('fills every default for an empty (or missing) config', () => {
    const config = parseAgentConfig({});
    expect(config).toMatchObject({
      firstMessage: null,
      language: 'en',
      stt: { provider: 'openai', model: 'whisper-1' },
      llm: { provider: 'openai', model: 'gpt-4o-mini' },
      tts: { provider: 'flite' },
      realtime: { provider: 'openai', model: 'gpt-realtime', turnDetection: 'server_vad' },
      turn: { threshold: 0.5, minSpeechMs: 250, minSilenceMs: 500, prefixPaddingMs: 300, endOfTurnModel: false },
      interruptions: { enabled: true, minSpeechMs: 400 },
      idle: { promptAfterMs: 10_000, maxPrompts: 2, prompt: 'Are you still there?' },
      maxDurationS: 1800,
      tools: [],
    });
    expect(config.systemPrompt.length).toBeGreaterThan(0);
    expect(config.apologyMessage.length).toBeGreaterThan(0);
    expect(config.maxDurationMessage.length).toBeGreaterThan(0);
    expect(parseAgentConfig(undefined)).toEqual(config);
    expect(parseAgentConfig(null)).toEqual(config);
  });

  it('fills defaults inside a section that is partly given, keeping what was given', () => {
    const config = parseAgentConfig({ turn: { minSilenceMs: 800 }, idle: { maxPrompts: 0 }, firstMessage: 'Hello!' });
    expect(config.turn).toEqual({ threshold: 0.5, minSpeechMs: 250, minSilenceMs: 800, prefixPaddingMs: 300, endOfTurnModel: false });
    expect(config.idle.maxPrompts).toBe(0);
    expect(config.idle.promptAfterMs).toBe(10_000);
    expect(config.firstMessage).toBe('Hello!');
  });

  it('lists every problem with its path, in one error', () => {
    const problems = problemsOf({
      unknownKey: 1,
      turn: { threshold: 2 },
      idle: { promptAfterMs: 10 },
      llm: { apiKeyEnv: 'sk-live-not-a-name', baseUrl: 'ftp://models.example' },
      tools: [
        { type: 'webhook', name: 'bad name', description: 'd', url: 'https://crm.example/hook', signingSecret: 'crm' },
        { type: 'transfer_call', destinations: [] },
        { type: 'sms' },
      ],
    });
    expect(problems.map((problem) => problem.path).sort()).toEqual(
      ['', 'idle.promptAfterMs', 'llm.apiKeyEnv', 'llm.baseUrl', 'tools.0.name', 'tools.1.destinations', 'tools.2.type', 'turn.threshold'].sort(),
    );
    expect(problems.find((problem) => problem.path === '')?.message).toMatch(/unknownKey/);
    expect(problems.find((problem) => problem.path === 'llm.apiKeyEnv')?.message).toMatch(/must be OPENAI_API_KEY \(the operator's provider key\)/);
    expect(problems.find((problem) => problem.path === 'tools.0.name')?.message).toMatch(/letters, digits/);
  });

  it('says where each problem is in the error message, naming the root when the path is empty', () => {
    expect(() => parseAgentConfig({ maxDurationS: 0, extra: true })).toThrow(/maxDurationS: .*; \(root\): .*extra/);
  });

  it('does not echo a secret-looking value into the error', () => {
    const secret = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';
    expect(() => parseAgentConfig({ llm: { apiKeyEnv: secret } })).toThrow(AgentConfigError);
    expect(() => parseAgentConfig({ llm: { apiKeyEnv: secret } })).not.toThrow(new RegExp(secret));
  });

  it('rejects values that are not objects at all', () => {
    expect(problemsOf('systemPrompt')).toEqual([{ path: '', message: expect.any(String) }]);
  });
});

describe('engine credentials', () => {
  it('takes the organization\'s own key by vault name, for any endpoint', () => {
    const config = parseAgentConfig({ llm: { baseUrl: 'https://vllm.example/v1', apiKeySecret: 'vllm-key' }, realtime: { url: 'wss://rt.example/v1', apiKeySecret: 'rt' } });
    expect(config.llm).toMatchObject({ baseUrl: 'https://vllm.example/v1', apiKeySecret: 'vllm-key' });
    expect(config.realtime).toMatchObject({ url: 'wss://rt.example/v1', apiKeySecret: 'rt' });
  });

  it('takes the operator key only for the provider\'s own endpoint', () => {
    expect(parseAgentConfig({ llm: { apiKeyEnv: 'OPENAI_API_KEY' } }).llm.apiKeyEnv).toBe('OPENAI_API_KEY');
    expect(parseAgentConfig({ stt: { apiKeyEnv: 'OPENAI_API_KEY', baseUrl: 'https://api.openai.com/v1' } }).stt.apiKeyEnv).toBe('OPENAI_API_KEY');
    const problems = problemsOf({
      stt: { apiKeyEnv: 'OPENAI_API_KEY', baseUrl: 'http://tenant.example/v1' },
      llm: { apiKeyEnv: 'OPENAI_API_KEY', baseUrl: 'http://10.0.0.1/v1' },
      tts: { provider: 'openai', apiKeyEnv: 'OPENAI_API_KEY', baseUrl: 'http://127.0.0.1:9/v1' },
      realtime: { apiKeyEnv: 'OPENAI_API_KEY', url: 'wss://tenant.example/realtime' },
    });
    expect(problems.map((problem) => problem.path).sort()).toEqual(['llm.apiKeyEnv', 'realtime.apiKeyEnv', 'stt.apiKeyEnv', 'tts.apiKeyEnv']);
    for (const problem of problems) expect(problem.message).toMatch(/only sent to the provider's own endpoint/);
  });

  it('refuses both key sources at once, and a secret name that is not one', () => {
    const problems = problemsOf({ llm: { apiKeyEnv: 'OPENAI_API_KEY', apiKeySecret: 'mine' }, tts: { apiKeySecret: 'has space' } });
    expect(problems.map((problem) => problem.path).sort()).toEqual(['llm.apiKeySecret', 'tts.apiKeySecret']);
  });
});

describe('tool configs', () => {
  it('fills each kind of tool with its own defaults', () => {
    const config = parseAgentConfig({
      tools: [
        { type: 'end_call' },
        { type: 'transfer_call', destinations: [{ number: '+15550002000', label: 'Support' }] },
        { type: 'webhook', name: 'lookup_order', description: 'Finds an order', url: 'https://crm.example/hook', signingSecret: 'crm-signing' },
      ],
    });
    expect(config.tools).toEqual([
      { type: 'end_call', goodbye: 'Thank you for calling. Goodbye.' },
      { type: 'transfer_call', destinations: [{ number: '+15550002000', label: 'Support' }], message: 'Please hold while I transfer your call.' },
      {
        type: 'webhook',
        name: 'lookup_order',
        description: 'Finds an order',
        url: 'https://crm.example/hook',
        signingSecret: 'crm-signing',
        parameters: { type: 'object', properties: {} },
        timeoutMs: 5000,
      },
    ]);
  });

  it('checks fields by the tool kind: a webhook needs a url and secret, a transfer E.164 numbers', () => {
    expect(ToolConfigSchema.safeParse({ type: 'webhook', name: 'x', description: 'd' }).success).toBe(false);
    expect(ToolConfigSchema.safeParse({ type: 'transfer_call', destinations: [{ number: '555-2000' }] }).success).toBe(false);
    // Fields of another kind are not accepted (strict objects).
    expect(ToolConfigSchema.safeParse({ type: 'end_call', url: 'https://crm.example/hook' }).success).toBe(false);
    expect(ToolConfigSchema.safeParse({ type: 'webhook', name: 'x', description: 'd', url: 'http://127.0.0.1:9/hook', signingSecret: 'crm' }).success).toBe(true);
  });

  it('refuses the removed environment references with a message that says how to move them', () => {
    const problems = problemsOf({
      tools: [{ type: 'webhook', name: 'x', description: 'd', url: 'https://crm.example/hook', signingSecret: 'crm', signingSecretEnv: 'SWITCHBOARD_SECRET_CRM' }],
      llm: { apiKeyEnv: 'SWITCHBOARD_SECRET_OPENAI' },
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        { path: 'tools.0.signingSecretEnv', message: expect.stringMatching(/signingSecretEnv was removed: store the value with POST \/v1\/secrets/) },
        { path: 'llm.apiKeyEnv', message: expect.stringMatching(/store the value with POST \/v1\/secrets/) },
      ]),
    );
  });

  it('caps the number of tools', () => {
    const many = Array.from({ length: 33 }, () => ({ type: 'end_call' }));
    const parsed = AgentConfigSchema.safeParse({ tools: many });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['tools']);
  });
});

describe('warm transfer destinations and the voicemail', () => {
  const transfer = (destination: object) => ({ tools: [{ type: 'transfer_call', destinations: [{ number: '+15550002000', ...destination }] }] });

  it('stores a cold destination as written (no mode filled in), and a warm one with only what was given', () => {
    expect(parseAgentConfig(transfer({})).tools[0]).toMatchObject({ destinations: [{ number: '+15550002000' }] });
    const warm = parseAgentConfig(transfer({ mode: 'warm', answerTimeoutS: 60 })).tools[0];
    expect(warm).toMatchObject({ destinations: [{ number: '+15550002000', mode: 'warm', answerTimeoutS: 60 }] });
  });

  it('names every warm-only setting written on a cold destination, and every bound broken on a warm one', () => {
    expect(problemsOf(transfer({ holdMessage: 'Hold on.', whisper: 'none' })).map((problem) => [problem.path, problem.message])).toEqual([
      ['tools.0.destinations.0.holdMessage', 'holdMessage applies to warm transfers only (set mode: "warm")'],
      ['tools.0.destinations.0.whisper', 'whisper applies to warm transfers only (set mode: "warm")'],
    ]);
    const paths = problemsOf(transfer({ mode: 'warm', holdMusicUrl: 'http://music.example.com/a.mp3', answerTimeoutS: 121, whisper: 'loud' })).map((problem) => problem.path);
    expect(paths.sort()).toEqual(['tools.0.destinations.0.answerTimeoutS', 'tools.0.destinations.0.holdMusicUrl', 'tools.0.destinations.0.whisper']);
    expect(problemsOf(transfer({ mode: 'warm', answerTimeoutS: 4 })).map((problem) => problem.path)).toEqual(['tools.0.destinations.0.answerTimeoutS']);
  });

  it('takes a voicemail message of 1 to 2000 characters, none by default', () => {
    expect(parseAgentConfig({}).voicemail).toBeNull();
    expect(parseAgentConfig({ voicemail: { message: ' Call us back. ' } }).voicemail).toEqual({ message: 'Call us back.' });
    expect(problemsOf({ voicemail: { message: 'x'.repeat(2001) } }).map((problem) => problem.path)).toEqual(['voicemail.message']);
    expect(problemsOf({ voicemail: { message: '' } }).map((problem) => problem.path)).toEqual(['voicemail.message']);
  });
});
