import type { CampaignCallFacts, CampaignRecord } from '@switchboard/persistence';
import { outcomeOfCall, resolveAttempt } from './campaign-outcome';

const call = (facts: Partial<CampaignCallFacts>): CampaignCallFacts => ({
  status: 'queued',
  answeredAt: null,
  answeredBy: null,
  streamStartedAt: null,
  endReason: null,
  endedAt: null,
  ...facts,
});

const campaign = (overrides: Partial<CampaignRecord> = {}): CampaignRecord => ({
  id: 'c',
  organizationId: 'o',
  name: 'n',
  agentId: 'a',
  fromNumber: '+15550000000',
  status: 'running',
  statusReason: null,
  timeZone: 'UTC',
  callingWindows: {},
  startAt: new Date('2026-12-07T00:00:00Z'),
  endAt: null,
  maxConcurrentCalls: 1,
  retry: { onBusy: true, onNoAnswer: true, onVoicemail: false, maxAttempts: 3, delaySeconds: 600 },
  machineDetection: null,
  voicemail: { mode: 'agent', message: null },
  contactCount: 1,
  createdAt: new Date(),
  updatedAt: new Date(),
  completedAt: null,
  ...overrides,
});

describe('outcomeOfCall', () => {
  it.each([
    [{ status: 'completed', answeredAt: new Date() }, 'answered'],
    [{ status: 'completed', answeredBy: 'machine_end_beep' }, 'voicemail'],
    [{ status: 'completed', answeredBy: 'human' }, 'answered'],
    [{ status: 'busy' }, 'busy'],
    [{ status: 'no-answer' }, 'no_answer'],
    [{ status: 'failed', endReason: 'twilio_error' }, 'failed'],
    [{ status: 'canceled' }, 'failed'],
    // Ended by us before Twilio's final status: answered if it ever was.
    [{ status: 'in-progress', answeredAt: new Date(), endReason: 'stream_stopped' }, 'answered'],
    [{ status: 'ringing', endReason: 'api_hangup' }, 'failed'],
  ] as const)('%j is %s', (facts, outcome) => {
    expect(outcomeOfCall(call(facts))).toBe(outcome);
  });
});

describe('resolveAttempt', () => {
  const now = new Date('2026-12-07T10:00:00Z');

  it('retries an outcome the campaign retries, after the delay, while attempts are left', () => {
    expect(resolveAttempt(campaign(), 'busy', 1, now)).toEqual({ status: 'pending', at: new Date('2026-12-07T10:10:00Z') });
    expect(resolveAttempt(campaign(), 'no_answer', 2, now)).toEqual({ status: 'pending', at: new Date('2026-12-07T10:10:00Z') });
    expect(resolveAttempt(campaign(), 'busy', 3, now)).toEqual({ status: 'done' });
  });

  it('never retries an answered or failed call, nor a voicemail unless asked to', () => {
    expect(resolveAttempt(campaign(), 'answered', 1, now)).toEqual({ status: 'done' });
    expect(resolveAttempt(campaign(), 'failed', 1, now)).toEqual({ status: 'done' });
    expect(resolveAttempt(campaign(), 'voicemail', 1, now)).toEqual({ status: 'done' });
    expect(resolveAttempt(campaign({ retry: { ...campaign().retry, onVoicemail: true } }), 'voicemail', 1, now).status).toBe('pending');
  });

  it('does not retry for a cancelled campaign, or past its end', () => {
    expect(resolveAttempt(campaign({ status: 'cancelled' }), 'busy', 1, now)).toEqual({ status: 'done' });
    expect(resolveAttempt(campaign({ endAt: new Date('2026-12-07T10:05:00Z') }), 'busy', 1, now)).toEqual({ status: 'done' });
    expect(resolveAttempt(campaign({ status: 'paused' }), 'busy', 1, now).status).toBe('pending');
  });
});
