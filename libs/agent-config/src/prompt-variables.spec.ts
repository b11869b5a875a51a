import { promptVariablesOf, renderPromptTemplate, type PromptVariables } from './prompt-variables';

const variables: PromptVariables = {
  callerNumber: '+15550001111',
  calledNumber: '+15550002222',
  callId: 'call-42',
  params: { customerName: 'Ada', 'tier-level': 'gold', empty: '' },
};

describe('renderPromptTemplate', () => {
  it('fills every known placeholder', () => {
    const template = 'From {{caller.number}} to {{called.number}} on {{call.id}} for {{call.params.customerName}} ({{call.params.tier-level}}).';
    expect(renderPromptTemplate(template, variables)).toBe('From +15550001111 to +15550002222 on call-42 for Ada (gold).');
  });

  it('allows spaces inside the braces and repeats', () => {
    expect(renderPromptTemplate('{{ caller.number }} / {{caller.number}}', variables)).toBe('+15550001111 / +15550001111');
  });

  it('turns unknown names and missing parameters into empty text, never "{{...}}"', () => {
    expect(renderPromptTemplate('Hi {{caller.name}}!', variables)).toBe('Hi !');
    expect(renderPromptTemplate('Order {{call.params.orderId}}.', variables)).toBe('Order .');
    expect(renderPromptTemplate('[{{call.params.empty}}]', variables)).toBe('[]');
  });

  it('does not reach inherited object properties through call.params', () => {
    expect(renderPromptTemplate('{{call.params.constructor}}{{call.params.toString}}{{call.params.__proto__}}', variables)).toBe('');
  });

  it('leaves text that is not a placeholder alone', () => {
    const text = 'Use {single} braces, {{ two words }} and {{}} as written.';
    expect(renderPromptTemplate(text, variables)).toBe(text);
  });

  it('does not expand placeholders that appear in the values', () => {
    const sneaky: PromptVariables = { ...variables, params: { note: '{{caller.number}}' } };
    expect(renderPromptTemplate('Note: {{call.params.note}}', sneaky)).toBe('Note: {{caller.number}}');
  });

  it('fills {{call.answeredBy}} with the answering-machine verdict, and empty text while it is unknown', () => {
    expect(renderPromptTemplate('Answered by {{call.answeredBy}}.', { ...variables, answeredBy: 'machine_start' })).toBe('Answered by machine_start.');
    expect(renderPromptTemplate('Answered by {{call.answeredBy}}.', { ...variables, answeredBy: null })).toBe('Answered by .');
    expect(renderPromptTemplate('Answered by {{call.answeredBy}}.', variables)).toBe('Answered by .');
  });
});

describe('promptVariablesOf', () => {
  it('takes the stream parameters as call.params and carries answeredBy when the edge knows it', () => {
    const call = { callerNumber: '+15550001111', calledNumber: '+15550002222', callId: 'call-7', streamParameters: { customerName: 'Ada' } };
    const known = promptVariablesOf({ ...call, answeredBy: 'human' });
    expect(renderPromptTemplate('{{call.params.customerName}} / {{call.answeredBy}}', known)).toBe('Ada / human');
    expect(promptVariablesOf(call).answeredBy).toBeNull();
  });
});
