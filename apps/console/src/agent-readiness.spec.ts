import { afterEach, describe, expect, it } from '@jest/globals';
import { notReadyProblems, notReadyText, problemText, readinessOf } from './agent-readiness';
import { api, ApiError } from './api';

const NO_KEY = { path: 'llm.apiKeySecret', message: 'no OpenAI key: store one with POST /v1/secrets' };

describe("an agent's readiness in the console", () => {
  it('takes an agent without a readiness field (an older server) as ready', () => {
    expect(readinessOf({})).toEqual({ ready: true, problems: [] });
    expect(readinessOf(undefined).ready).toBe(true);
    expect(readinessOf({ readiness: { ready: false, problems: [NO_KEY] } }).ready).toBe(false);
  });

  it('says what to fix, by path inside the config', () => {
    expect(problemText(NO_KEY)).toBe('llm.apiKeySecret: no OpenAI key: store one with POST /v1/secrets');
    expect(problemText({ path: '', message: 'the engine is unavailable' })).toBe('the engine is unavailable');
    expect(notReadyText([NO_KEY, { path: 'tts.voice', message: 'is required.' }])).toBe(
      'This agent is not ready to take calls: llm.apiKeySecret: no OpenAI key: store one with POST /v1/secrets; tts.voice: is required.',
    );
    expect(notReadyText([])).toBe('This agent is not ready to take calls.');
  });

  it("reads a web call's 409 agent_not_ready, whether its code is in `code` or in `error`", () => {
    expect(notReadyProblems(new ApiError(409, 'agent_not_ready', 'The agent is not ready.', [], [NO_KEY]))).toEqual([NO_KEY]);
    expect(notReadyProblems(new ApiError(409, 'agent_not_ready', 'The agent is not ready.'))).toEqual([{ path: '', message: 'The agent is not ready.' }]);
    expect(notReadyProblems(new ApiError(409, 'concurrency_limit', 'Too many calls.'))).toBeUndefined();
    expect(notReadyProblems(new Error('network down'))).toBeUndefined();
  });

  describe('the 409 as api() reads it from the server', () => {
    const realFetch = globalThis.fetch;
    afterEach(() => {
      globalThis.fetch = realFetch;
    });
    const answer409 = (body: object) => {
      globalThis.fetch = () => Promise.resolve(new Response(JSON.stringify(body), { status: 409, headers: { 'content-type': 'application/json' } }));
    };

    it.each([
      ['in `code`, as the API\'s other errors put it', { statusCode: 409, error: 'Conflict', code: 'agent_not_ready', message: 'The agent is not ready.', problems: [NO_KEY] }],
      ['in `error`', { error: 'agent_not_ready', message: 'The agent is not ready.', problems: [NO_KEY] }],
    ])('finds the code %s', async (_where, body) => {
      answer409(body);
      const caught = await api('/v1/agents/a/web-calls', { method: 'POST', body: {} }).catch((error: unknown) => error);
      expect(notReadyProblems(caught)).toEqual([NO_KEY]);
    });

    it('keeps the HTTP phrase out of the code', async () => {
      answer409({ statusCode: 409, error: 'Conflict', message: 'Something else.' });
      const caught = await api('/v1/x').catch((error: unknown) => error);
      expect((caught as ApiError).code).toBe('http_409');
    });
  });
});
