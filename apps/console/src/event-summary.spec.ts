import { describe, expect, it } from '@jest/globals';
import { callFailureText, eventTone, eventTypeText, summarizeEvent } from './event-summary';

describe('call events in words', () => {
  it('says what the common events mean', () => {
    expect(summarizeEvent({ type: 'stream_started', payload: { transport: 'web', audio: { encoding: 'pcm_s16le', sampleRate: 16000 } } })).toBe('Audio connected (browser, 16 kHz)');
    expect(summarizeEvent({ type: 'stream_stopped', payload: { by: 'browser' } })).toBe('The browser hung up');
    expect(summarizeEvent({ type: 'turn_ended', payload: { reason: 'silence', endOfSpeechMs: 2100, endOfTurnMs: 2620 } })).toBe('The caller’s turn ended (silence), 520 ms after they stopped speaking');
    expect(summarizeEvent({ type: 'barge_in', payload: { cause: 'speech', heardText: 'We open at nine' } })).toBe('The caller interrupted the agent after hearing “We open at nine”');
    expect(summarizeEvent({ type: 'stream_closed', payload: { reason: 'stream_stopped', durationMs: 12_340, heardMs: 4_500 } })).toBe('Audio closed (hung up), after 12.3 s, the agent was heard for 4.5 s');
    expect(summarizeEvent({ type: 'turn_ended', payload: { reason: 'silence', endOfSpeechMs: 100, endOfTurnMs: 9_859 } })).toBe('The caller’s turn ended (silence), 9.8 s after they stopped speaking');
    expect(summarizeEvent({ type: 'dtmf', payload: { digit: '5' } })).toBe('Key pressed: 5');
  });

  it('quotes an engine’s failure with its message', () => {
    expect(summarizeEvent({ type: 'llm_error', payload: { engine: 'openai', code: 'http_401', message: 'Incorrect API key provided', retryable: false } })).toBe('The language model failed: Incorrect API key provided');
    expect(summarizeEvent({ type: 'error', payload: { code: 'engines_unavailable', message: 'the secret "openai" does not exist in this organization (POST /v1/secrets)' } })).toBe(
      'Error (engines unavailable): the secret "openai" does not exist in this organization (POST /v1/secrets)',
    );
    expect(summarizeEvent({ type: 'error', payload: { code: 'agent_config_refused', message: 'The agent config is invalid.', problems: [{ path: 'llm.model', message: 'is required' }] } })).toBe(
      'Error (agent config refused): The agent config is invalid. (llm.model: is required)',
    );
  });

  it('falls back to the scalar fields of an event it does not know, and to nothing for an empty payload', () => {
    expect(summarizeEvent({ type: 'new_thing', payload: { someCount: 3, nested: { a: 1 }, label: 'x' } })).toBe('some count: 3, label: x');
    expect(summarizeEvent({ type: 'new_thing', payload: null })).toBe('');
    expect(eventTypeText('turn_ended')).toBe('turn ended');
  });

  it('marks the events that say something went wrong', () => {
    expect(eventTone('error')).toBe('error');
    expect(eventTone('tts_error')).toBe('error');
    expect(eventTone('transfer_failed')).toBe('warning');
    expect(eventTone('turn_ended')).toBeUndefined();
  });

  it('explains an errored call by the error that ended it, and says nothing for a normal end', () => {
    const secretGone = { type: 'error', payload: { code: 'engines_unavailable', message: 'the secret "openai" does not exist in this organization (POST /v1/secrets)' } };
    expect(callFailureText('agent_error', [{ type: 'stream_started', payload: {} }, secretGone])).toBe(
      'Error (engines unavailable): the secret "openai" does not exist in this organization (POST /v1/secrets).',
    );
    const gaveUp = [
      { type: 'llm_error', payload: { message: 'connect ECONNREFUSED' } },
      { type: 'llm_error', payload: { message: 'connect ECONNREFUSED again' } },
      { type: 'agent_gave_up', payload: { consecutiveFailures: 3 } },
    ];
    expect(callFailureText('agent_error', gaveUp)).toBe('The agent gave up after 3 failed answers in a row. The last failure: The language model failed: connect ECONNREFUSED again.');
    expect(callFailureText('agent_error', [])).toBe('The call ended with agent error.');
    // An engine failure the agent apologised for and recovered from is not why the call ended.
    expect(callFailureText('stream_stopped', gaveUp.slice(0, 1))).toBeUndefined();
  });
});
