import { describe, expect, it } from '@jest/globals';
import { agentLabel, callDurationMs, callOutcome, callTitle, endReasonText, formatDuration, isErrorEndReason, type CallFacts } from './call-text';

const ENDED: CallFacts = {
  direction: 'web',
  status: 'completed',
  fromNumber: 'browser',
  toNumber: 'web',
  startedAt: '2025-03-01T10:00:00.000Z',
  endedAt: '2025-03-01T10:01:05.400Z',
  endReason: 'stream_stopped',
};

describe('a call in words', () => {
  it('marks a call that ended on an error as an error, whatever its carrier status says', () => {
    expect(callOutcome({ ...ENDED, endReason: 'agent_error' })).toEqual({ label: 'error', tone: 'error' });
    expect(callOutcome({ ...ENDED, endReason: 'agent_not_ready' })).toEqual({ label: 'error', tone: 'error' });
    expect(callOutcome({ ...ENDED, endReason: 'webhook_refused' }).tone).toBe('error'); // a reason named like an error
    expect(callOutcome(ENDED)).toEqual({ label: 'completed', tone: 'ok' });
    expect(callOutcome({ ...ENDED, endReason: 'connection_lost' })).toEqual({ label: 'completed', tone: 'warning' });
    expect(callOutcome({ ...ENDED, status: 'no-answer', endReason: null })).toEqual({ label: 'no answer', tone: 'warning' });
    expect(callOutcome({ ...ENDED, status: 'in-progress', endedAt: null, endReason: null })).toEqual({ label: 'in progress (live)', tone: 'live' });
    expect(isErrorEndReason('agent_hangup')).toBe(false);
  });

  it('says why a call ended in words, and keeps an unknown reason readable', () => {
    expect(endReasonText('stream_stopped')).toBe('hung up');
    expect(endReasonText('agent_error')).toBe('agent error');
    expect(endReasonText('some_new_reason')).toBe('some new reason');
    expect(endReasonText(null)).toBe('—');
  });

  it('measures a call from start to end (or to now while live), preferring what Twilio billed', () => {
    expect(formatDuration(callDurationMs(ENDED, 0))).toBe('1:05');
    expect(callDurationMs({ ...ENDED, durationSeconds: 64 }, 0)).toBe(64_000);
    expect(callDurationMs({ ...ENDED, endedAt: null, endReason: null }, Date.parse('2025-03-01T10:00:07.000Z'))).toBe(7_000);
    expect(callDurationMs({ ...ENDED, endedAt: '2025-03-01T09:00:00.000Z' }, 0)).toBeNull();
    expect(formatDuration(7_000)).toBe('0:07');
    expect(formatDuration(3_723_000)).toBe('1:02:03');
    expect(formatDuration(null)).toBe('—');
  });

  it('titles a call by its agent, not by the browser’s placeholder numbers', () => {
    expect(callTitle(ENDED, 'Front desk')).toBe('Browser call to Front desk');
    expect(callTitle({ ...ENDED, direction: 'inbound', fromNumber: '+15557654321', toNumber: '+15551239876' }, 'Front desk')).toBe('Call from +15557654321 to Front desk (+15551239876)');
    expect(callTitle({ ...ENDED, direction: 'outbound', fromNumber: '+15551239876', toNumber: '+15550001001' }, 'Reminders')).toBe('Call from Reminders to +15550001001');
    expect(callTitle({ ...ENDED, direction: 'inbound', fromNumber: '+1', toNumber: '+2' }, undefined)).toBe('Call from +1 to +2');
  });

  it('names an agent, or a short id for one it does not know', () => {
    const names = new Map([['4b1e0c7e-0000-4000-8000-000000000000', 'Front desk']]);
    expect(agentLabel('4b1e0c7e-0000-4000-8000-000000000000', names)).toBe('Front desk');
    expect(agentLabel('9f00aa11-0000-4000-8000-000000000000', names)).toBe('9f00aa11…');
    expect(agentLabel(null, names)).toBe('—');
  });
});
