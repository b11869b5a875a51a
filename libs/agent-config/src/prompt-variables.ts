/**
 * Fills `{{name}}` placeholders in prompts and scripted lines. Known names: caller.number,
 * called.number, call.id, call.params.NAME (an outbound call's variables and the stream's custom
 * parameters) and call.answeredBy (the carrier's answering-machine verdict: human, machine_start, ...;
 * empty when detection was not asked for or had not decided when the agent started).
 * An unknown placeholder becomes empty text rather than reaching the caller as "{{...}}".
 */
export interface PromptVariables {
  callerNumber: string;
  calledNumber: string;
  callId: string;
  params: Record<string, string>;
  answeredBy?: string | null;
}

const PLACEHOLDER = /\{\{\s*([a-zA-Z0-9_.-]+)\s*\}\}/g;

export function renderPromptTemplate(template: string, variables: PromptVariables): string {
  return template.replace(PLACEHOLDER, (_match, name: string) => lookup(name, variables) ?? '');
}

function lookup(name: string, variables: PromptVariables): string | undefined {
  if (name === 'caller.number') return variables.callerNumber;
  if (name === 'called.number') return variables.calledNumber;
  if (name === 'call.id') return variables.callId;
  if (name === 'call.answeredBy') return variables.answeredBy ?? undefined;
  if (name.startsWith('call.params.')) {
    const key = name.slice('call.params.'.length);
    return Object.hasOwn(variables.params, key) ? variables.params[key] : undefined;
  }
  return undefined;
}

/** The variables a call's prompts can use, from what the edge knows of the call. */
export function promptVariablesOf(call: {
  callerNumber: string;
  calledNumber: string;
  callId: string;
  streamParameters: Record<string, string>;
  answeredBy?: string | null;
}): PromptVariables {
  return {
    callerNumber: call.callerNumber,
    calledNumber: call.calledNumber,
    callId: call.callId,
    params: call.streamParameters,
    answeredBy: call.answeredBy ?? null,
  };
}
