import { compileToolSchema } from '@switchboard/conversation';
import type { CallDetail } from '@switchboard/persistence';
import type { CallerTurn, TurnExpectations } from './scenario-suite.schema';

/** When the simulated caller started speaking each turn, in the call's offsets (ms since its start). */
export interface TurnWindow {
  startMs: number;
}

/** One caller turn's outcome, as stored in a run's results. */
export interface TurnResult {
  /** What the caller said (its `say` text, or "(recording)"). */
  said: string;
  /** What the agent's recogniser heard in this turn. */
  heard: string;
  /** What the agent said in reply, as the caller heard it (interrupted replies: the part played). */
  reply: string;
  toolCalls: Array<{ name: string; arguments: unknown; error: string | null }>;
  failures: string[];
}

export interface ScenarioOutcome {
  passed: boolean;
  turns: TurnResult[];
}

/** The call's end reasons that mean "the agent ended the call" (the others are the caller's or a fault). */
const AGENT_ENDED = new Set(['agent_hangup']);

/**
 * Judges a finished scenario call against its turns' expectations. Every record of the call
 * (transcript, tool invocations, events) carries an offset from the call's start; what happened
 * between the start of caller turn i and the start of turn i+1 belongs to turn i. Turns the caller
 * never got to say (the call ended first) fail with the reason.
 */
export function judgeScenario(turns: readonly CallerTurn[], windows: readonly TurnWindow[], call: CallDetail): ScenarioOutcome {
  const results = turns.map((turn, index): TurnResult => {
    const said = turn.say ?? '(recording)';
    const window = windows[index];
    if (!window) {
      const failure = `not reached: the call ended (${call.endReason ?? 'unknown reason'}) before this turn`;
      return { said, heard: '', reply: '', toolCalls: [], failures: [failure] };
    }
    const endMs = windows[index + 1]?.startMs ?? Number.POSITIVE_INFINITY;
    const inWindow = (offsetMs: number | null) => offsetMs !== null && offsetMs >= window.startMs && offsetMs < endMs;
    const spoken = call.transcript.filter((entry) => inWindow(entry.startMs));
    const heard = spoken.filter((entry) => entry.role === 'user').map((entry) => entry.text).join(' ');
    const reply = spoken
      .filter((entry) => entry.role === 'assistant')
      .map((entry) => (entry.interrupted ? (entry.heardText ?? '') : entry.text))
      .filter((text) => text !== '')
      .join(' ');
    const toolCalls = call.toolInvocations.filter((tool) => inWindow(tool.startedAtMs)).map((tool) => ({ name: tool.name, arguments: tool.arguments, error: tool.error }));
    const isLastReached = index === windows.length - 1;
    const transfers = call.events.filter((event) => event.type === 'call_transferred' && inWindow(event.offsetMs));
    const failures = expectationFailures(turn.expect, { reply, toolCalls, transfers: transfers.map(transferTarget), endedByAgentHere: isLastReached && AGENT_ENDED.has(call.endReason ?? ''), endReason: call.endReason, isLastReached });
    return { said, heard, reply, toolCalls, failures };
  });
  return { passed: results.every((turn) => turn.failures.length === 0), turns: results };
}

interface TurnFacts {
  reply: string;
  toolCalls: TurnResult['toolCalls'];
  transfers: string[];
  endedByAgentHere: boolean;
  endReason: string | null;
  isLastReached: boolean;
}

function expectationFailures(expect: TurnExpectations, facts: TurnFacts): string[] {
  const failures: string[] = [];
  const reply = facts.reply.toLowerCase();
  for (const phrase of expect.replyIncludes ?? []) {
    if (!reply.includes(phrase.toLowerCase())) failures.push(`reply does not include "${phrase}" (reply: ${quoteReply(facts.reply)})`);
  }
  for (const phrase of expect.replyExcludes ?? []) {
    if (reply.includes(phrase.toLowerCase())) failures.push(`reply includes "${phrase}", which it must not (reply: ${quoteReply(facts.reply)})`);
  }
  for (const expected of expect.toolCalls ?? []) failures.push(...toolCallFailures(expected, facts.toolCalls));
  if (expect.endsCall === true && !facts.endedByAgentHere) {
    failures.push(facts.isLastReached ? `the agent did not end the call (it ended as ${facts.endReason ?? 'unknown'})` : 'the agent did not end the call: the conversation went on');
  }
  if (expect.endsCall === false && facts.isLastReached && AGENT_ENDED.has(facts.endReason ?? '')) failures.push('the agent ended the call');
  if (expect.transfer !== undefined) {
    const to = expect.transfer === true ? undefined : expect.transfer.to;
    if (facts.transfers.length === 0) failures.push(`no transfer${to ? ` to ${to}` : ''}`);
    else if (to !== undefined && !facts.transfers.includes(to)) failures.push(`transferred to ${facts.transfers.join(', ')}, not ${to}`);
  }
  return failures;
}

function toolCallFailures(expected: NonNullable<TurnExpectations['toolCalls']>[number], calls: TurnResult['toolCalls']): string[] {
  const named = calls.filter((call) => call.name === expected.name);
  if (named.length === 0) {
    const made = calls.length === 0 ? 'no tool was called' : `called: ${calls.map((call) => call.name).join(', ')}`;
    return [`tool ${expected.name} was not called (${made})`];
  }
  if (expected.arguments === undefined) return [];
  // Compiled by the same bounded compiler as a tool's own parameters: the schema is tenant-written.
  const compiled = compileToolSchema(expected.arguments);
  if (!compiled.ok) return [`tool ${expected.name}: the expected arguments schema is not usable`];
  const problems = named.map((call) => compiled.validator.problems(call.arguments));
  if (problems.some((problem) => problem === undefined)) return [];
  return [`tool ${expected.name} was called, but ${problems[0]} (arguments: ${excerpt(JSON.stringify(named[0]?.arguments))})`];
}

function transferTarget(event: { payload: unknown }): string {
  const payload = event.payload as { to?: unknown } | null;
  return typeof payload?.to === 'string' ? payload.to : '';
}

function quoteReply(reply: string): string {
  return reply === '' ? 'nothing' : `"${excerpt(reply)}"`;
}

function excerpt(text: string | undefined, max = 160): string {
  if (text === undefined) return '';
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
