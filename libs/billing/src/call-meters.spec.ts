import { billedTelephonyMinutes, callMetersSchema, emptyCallMeters, type CallMeters } from './call-meters';

const measured = (seconds: number, twilioBilledMinutes: number | null = null): CallMeters => ({
  ...emptyCallMeters('inbound', 'pipeline'),
  measuredConnectedSeconds: seconds,
  twilioBilledMinutes,
});

describe('emptyCallMeters', () => {
  it('is all zeros with no Twilio figure yet, and valid', () => {
    const meters = emptyCallMeters('outbound', 'realtime');
    expect(meters.direction).toBe('outbound');
    expect(meters.engine).toBe('realtime');
    expect(meters.twilioBilledMinutes).toBeNull();
    const { direction: _d, engine: _e, twilioBilledMinutes: _t, ...counts } = meters;
    expect(Object.values(counts).every((value) => value === 0)).toBe(true);
    expect(callMetersSchema.parse(meters)).toEqual(meters);
  });
});

describe('callMetersSchema', () => {
  it('reads meters back from stored JSON', () => {
    const meters: CallMeters = { ...measured(61, 3), llmInputTokens: 1_200, gpuMicroseconds: 3_000 };
    expect(callMetersSchema.parse(JSON.parse(JSON.stringify(meters)))).toEqual(meters);
  });

  it('rejects negative, fractional, unknown and missing fields', () => {
    const meters = emptyCallMeters('inbound', 'echo');
    expect(callMetersSchema.safeParse({ ...meters, sttAudioMs: -1 }).success).toBe(false);
    expect(callMetersSchema.safeParse({ ...meters, sttAudioMs: 1.5 }).success).toBe(false);
    expect(callMetersSchema.safeParse({ ...meters, twilioBilledMinutes: 2.5 }).success).toBe(false);
    expect(callMetersSchema.safeParse({ ...meters, direction: 'sideways' }).success).toBe(false);
    expect(callMetersSchema.safeParse({ ...meters, surprise: 1 }).success).toBe(false);
    const { ttsCharacters: _dropped, ...missingOne } = meters;
    expect(callMetersSchema.safeParse(missingOne).success).toBe(false);
  });
});

describe('billedTelephonyMinutes', () => {
  it('rounds the measure up to started minutes', () => {
    expect(billedTelephonyMinutes(measured(61))).toEqual({ minutes: 2, source: 'measured' });
    expect(billedTelephonyMinutes(measured(60))).toEqual({ minutes: 1, source: 'measured' });
    expect(billedTelephonyMinutes(measured(1))).toEqual({ minutes: 1, source: 'measured' });
    expect(billedTelephonyMinutes(measured(0))).toEqual({ minutes: 0, source: 'measured' });
  });

  it("takes Twilio's Duration over the measure once it arrives, 0 included", () => {
    expect(billedTelephonyMinutes(measured(61, 3))).toEqual({ minutes: 3, source: 'twilio' });
    expect(billedTelephonyMinutes(measured(61, 0))).toEqual({ minutes: 0, source: 'twilio' });
  });
});
