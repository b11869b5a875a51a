import {
  CALL_STATUSES,
  isTerminalCallStatus,
  parseStatusCallback,
  parseVoiceWebhook,
  statusCallbackSchema,
  type FormParseResult,
} from './status-callback';

const CALL_SID = 'CA5b8c5a5f2b6e1f0c2a1b0e9d8c7b6a5f';
const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';

function errorOf<T>(result: FormParseResult<T>) {
  if (result.ok) throw new Error('expected an error');
  return result.error;
}

describe('parseStatusCallback', () => {
  it('types a terminal callback with durations, sequence and timestamp', () => {
    const result = parseStatusCallback({
      CallSid: CALL_SID,
      AccountSid: ACCOUNT_SID,
      CallStatus: 'completed',
      SequenceNumber: '3',
      CallDuration: '47',
      Duration: '1',
      Timestamp: 'Tue, 08 Sep 2020 20:04:41 +0000',
      ApiVersion: '2010-04-01',
    });
    expect(result).toEqual({
      ok: true,
      value: {
        callSid: CALL_SID,
        accountSid: ACCOUNT_SID,
        status: 'completed',
        sequenceNumber: 3,
        callDurationSeconds: 47,
        billedMinutes: 1,
        timestamp: new Date('2020-09-08T20:04:41.000Z'),
      },
    });
  });

  it('leaves absent optional fields undefined', () => {
    const result = parseStatusCallback({ CallSid: CALL_SID, AccountSid: ACCOUNT_SID, CallStatus: 'ringing' });
    expect(result.ok && result.value).toEqual({
      callSid: CALL_SID,
      accountSid: ACCOUNT_SID,
      status: 'ringing',
      sequenceNumber: undefined,
      callDurationSeconds: undefined,
      billedMinutes: undefined,
      timestamp: undefined,
    });
  });

  it('names the missing or malformed field', () => {
    expect(errorOf(parseStatusCallback({ AccountSid: ACCOUNT_SID, CallStatus: 'ringing' }))).toEqual({
      code: 'invalid_form',
      field: 'CallSid',
      message: 'CallSid is required',
    });
    expect(errorOf(parseStatusCallback({ CallSid: CALL_SID, AccountSid: ACCOUNT_SID, CallStatus: 'exploded' }))).toMatchObject({
      field: 'CallStatus',
      message: expect.stringContaining('must be one of'),
    });
    expect(errorOf(parseStatusCallback({ CallSid: CALL_SID, AccountSid: ACCOUNT_SID, CallStatus: 'completed', CallDuration: '-4' }))).toMatchObject({
      field: 'CallDuration',
    });
    expect(errorOf(parseStatusCallback({ CallSid: CALL_SID, AccountSid: ACCOUNT_SID, CallStatus: 'completed', Timestamp: 'yesterday' }))).toMatchObject({
      field: 'Timestamp',
    });
    expect(errorOf(parseStatusCallback({ CallSid: '', AccountSid: ACCOUNT_SID, CallStatus: 'ringing' }))).toMatchObject({
      field: 'CallSid',
      message: 'CallSid must not be empty',
    });
    expect(errorOf(parseStatusCallback(undefined)).field).toBe('');
  });

  it('exposes the schema for validation pipes, with issue paths naming the form field', () => {
    const parsed = statusCallbackSchema.safeParse({ CallSid: CALL_SID, CallStatus: 'busy' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['AccountSid']);
  });
});

describe('parseVoiceWebhook', () => {
  const form = {
    CallSid: CALL_SID,
    AccountSid: ACCOUNT_SID,
    From: '+14155550100',
    To: '+14155550199',
    Direction: 'inbound',
    CallStatus: 'ringing',
    ApiVersion: '2010-04-01',
  };

  it('types the voice webhook form', () => {
    expect(parseVoiceWebhook(form)).toEqual({
      ok: true,
      value: { callSid: CALL_SID, accountSid: ACCOUNT_SID, from: '+14155550100', to: '+14155550199', direction: 'inbound', callStatus: 'ringing' },
    });
  });

  it('accepts a withheld caller id but requires the dialled number', () => {
    expect(parseVoiceWebhook({ ...form, From: 'anonymous' }).ok).toBe(true);
    const { To: _to, ...withoutTo } = form;
    expect(errorOf(parseVoiceWebhook(withoutTo))).toEqual({ code: 'invalid_form', field: 'To', message: 'To is required' });
    const { From: _from, ...withoutFrom } = form;
    expect(errorOf(parseVoiceWebhook(withoutFrom))).toMatchObject({ field: 'From', message: 'From is required' });
  });
});

describe('isTerminalCallStatus', () => {
  it('is true exactly for the statuses a call cannot leave', () => {
    expect(CALL_STATUSES.filter((status) => isTerminalCallStatus(status))).toEqual(['completed', 'busy', 'failed', 'no-answer', 'canceled']);
    expect(isTerminalCallStatus('in-progress')).toBe(false);
    expect(isTerminalCallStatus('unknown')).toBe(false);
  });
});
