import { amdCallbackSchema } from './amd-callback';

const form = { CallSid: 'CA' + 'a'.repeat(32), AccountSid: 'AC' + 'b'.repeat(32), AnsweredBy: 'machine_end_beep', MachineDetectionDuration: '2450' };

describe('amdCallbackSchema', () => {
  it('reads Twilio\'s AMD callback form into typed values', () => {
    expect(amdCallbackSchema.parse(form)).toEqual({ callSid: form.CallSid, accountSid: form.AccountSid, answeredBy: 'machine_end_beep', detectionDurationMs: 2450 });
  });

  it('accepts a verdict word it does not know yet, and a form without the duration', () => {
    const { MachineDetectionDuration: _duration, ...rest } = form;
    expect(amdCallbackSchema.parse({ ...rest, AnsweredBy: 'voicemail_bot' })).toMatchObject({ answeredBy: 'voicemail_bot', detectionDurationMs: undefined });
  });

  it('refuses a missing or malformed AnsweredBy, naming the field', () => {
    for (const AnsweredBy of [undefined, '', 'Human<script>', 'x'.repeat(80)]) {
      const result = amdCallbackSchema.safeParse({ ...form, AnsweredBy });
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.path).toEqual(['AnsweredBy']);
    }
  });
});
