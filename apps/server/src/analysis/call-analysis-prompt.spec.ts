import { compileToolSchema } from '@switchboard/conversation';
import { AnalysisConfigSchema } from '@switchboard/agent-config';
import { analysisMessages, correctionMessages, MAX_TRANSCRIPT_CHARS, readAnswer } from './call-analysis-prompt';

const schema = { type: 'object', properties: { intent: { type: 'string', enum: ['hours', 'order'] }, orderId: { type: 'string', pattern: '^[0-9]{4}$' } }, required: ['intent'], additionalProperties: false };
const config = AnalysisConfigSchema.parse({ enabled: true, structuredData: schema, successCriteria: 'The caller learnt the opening hours.' });
const validator = (() => {
  const compiled = compileToolSchema(schema);
  if (!compiled.ok) throw new Error('schema');
  return compiled.validator;
})();

const call = {
  transcript: [
    { role: 'assistant', text: 'Hello, Acme.', heardText: null, interrupted: false, startMs: 500 },
    { role: 'user', text: 'When do you open?', heardText: null, interrupted: false, startMs: 3_200 },
    { role: 'assistant', text: 'We open at nine on weekdays and at ten on weekends.', heardText: 'We open at nine', interrupted: true, startMs: 5_000 },
  ],
  toolInvocations: [{ name: 'lookup_hours', arguments: { day: 'monday' }, result: { opens: '09:00' }, error: null, startedAtMs: 4_100 }],
};

describe('post-call analysis prompt', () => {
  it('asks for each key the config wants, with the schema, and gives the call in time order (what was heard of a cut reply)', () => {
    const [system, user] = analysisMessages(config, call);
    expect(system?.content).toContain('"summary"');
    expect(system?.content).toContain(JSON.stringify(schema));
    expect(system?.content).toContain('The caller learnt the opening hours.');
    expect(user?.content).toBe(
      'The call:\n[00:00] Agent: Hello, Acme.\n[00:03] Caller: When do you open?\n[00:04] Tool lookup_hours({"day":"monday"}) -> {"opens":"09:00"}\n[00:05] Agent: We open at nine [interrupted]',
    );
  });

  it('asks only for a summary when nothing else is configured', () => {
    const [system] = analysisMessages(AnalysisConfigSchema.parse({ enabled: true }), call);
    expect(system?.content).not.toContain('structuredData');
    expect(system?.content).not.toContain('"success"');
  });

  it('keeps the end of a very long call', () => {
    const long = { transcript: Array.from({ length: 3000 }, (_, index) => ({ role: 'user', text: `sentence number ${index} of a long call`, heardText: null, interrupted: false, startMs: index * 1000 })), toolInvocations: [] };
    const text = String(analysisMessages(config, long)[1]?.content);
    expect(text.length).toBeLessThanOrEqual(MAX_TRANSCRIPT_CHARS + 100);
    expect(text).toContain('[the start of the call is left out]');
    expect(text).toContain('sentence number 2999 of a long call');
  });

  it('reads a valid answer (also inside a code fence)', () => {
    const read = readAnswer('```json\n{"summary": "Asked for hours.", "structuredData": {"intent": "hours"}, "success": true, "successReason": "Told nine."}\n```', config, validator);
    expect(read).toEqual({ summary: 'Asked for hours.', structuredData: { intent: 'hours' }, success: true, successReason: 'Told nine.', problems: [], structuredDataProblems: [] });
  });

  it('says what is wrong with an answer that does not match the schema or lacks a key', () => {
    const read = readAnswer('{"summary": "x", "structuredData": {"intent": "weather", "orderId": "12"}}', config, validator);
    expect(read.structuredData).toEqual({ intent: 'weather', orderId: '12' });
    expect(read.structuredDataProblems).toHaveLength(1);
    expect(read.structuredDataProblems[0]).toMatch(/^structuredData: does not match the schema: .*intent.*orderId/);
    expect(read.problems).toEqual(expect.arrayContaining(['"success" must be true or false', '"successReason" must be a string']));
  });

  it('refuses an answer that is not a JSON object, and shows the model its answer with the problems', () => {
    const read = readAnswer('I think the caller wanted the hours.', config, validator);
    expect(read.problems).toEqual(['the answer is not one JSON object']);
    expect(read.structuredDataProblems).toEqual(['the answer was not a JSON object']);
    const messages = correctionMessages(analysisMessages(config, call), 'I think...', read.problems);
    expect(messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'I think...' },
      { role: 'user', content: 'That answer is not valid: the answer is not one JSON object. Answer again with one JSON object that fixes this.' },
    ]);
  });
});
