import type { AddressInfo } from 'node:net';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AgentTestRepository, CallRepository, type AgentTestRunRecord, type CallDetail, type InputJsonValue } from '@switchboard/persistence';
import { PinoLogger } from 'nestjs-pino';
import { WEB_CALL_PATH } from '../web-calls/web-call-protocol';
import { WebCallService } from '../web-calls/web-call.service';
import { CallerVoice } from './caller-voice';
import { judgeScenario } from './scenario-expectations';
import { ScenarioCaller } from './scenario-caller';
import { scenarioError, type ScenarioResult } from './scenario-result';
import type { Scenario, ScenarioSuite } from './scenario-suite.schema';

/** How long a finished call may take to show its end (records flushed, call finalised). */
const CALL_RECORD_WAIT_MS = 15_000;

/**
 * Runs scenario suites in the background, one scenario (one web call) at a time, storing each
 * scenario's result as it finishes. A run is bounded by its deadline (see AgentTestService); a
 * server that shuts down mid-run ends its runs as errors instead of leaving them "running".
 */
@Injectable()
export class AgentTestRunner implements OnApplicationShutdown {
  private readonly running = new Map<string, { stop: AbortController; done: Promise<void> }>();
  private readonly voice = new CallerVoice();

  constructor(
    private readonly tests: AgentTestRepository,
    private readonly calls: CallRepository,
    private readonly webCalls: WebCallService,
    private readonly http: HttpAdapterHost,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(AgentTestRunner.name);
  }

  launch(organizationId: string, run: AgentTestRunRecord, suite: ScenarioSuite): void {
    const stop = new AbortController();
    const deadline = setTimeout(() => stop.abort(new Error('the run passed its deadline')), Math.max(0, run.deadlineAt.getTime() - Date.now()));
    const done = this.execute(organizationId, run, suite, stop.signal).finally(() => {
      clearTimeout(deadline);
      this.running.delete(run.id);
    });
    this.running.set(run.id, { stop, done });
  }

  async onApplicationShutdown(): Promise<void> {
    for (const { stop } of this.running.values()) stop.abort(new Error('the server shut down during the run'));
    await Promise.allSettled([...this.running.values()].map((entry) => entry.done));
    await this.voice.close();
  }

  private async execute(organizationId: string, run: AgentTestRunRecord, suite: ScenarioSuite, signal: AbortSignal): Promise<void> {
    const results: ScenarioResult[] = [];
    try {
      for (const scenario of suite.scenarios) {
        signal.throwIfAborted();
        results.push(await this.runScenario(organizationId, run, suite, scenario, signal));
        await this.tests.saveProgress(run.id, results as unknown as InputJsonValue);
      }
      const status = results.every((result) => result.passed) ? 'passed' : 'failed';
      await this.tests.finishRun(run.id, { status, results: results as unknown as InputJsonValue });
      this.logger.info({ runId: run.id, agentId: run.agentId, status }, 'scenario test run finished');
    } catch (error) {
      const message = signal.aborted ? messageOf(signal.reason) : messageOf(error);
      this.logger.warn({ runId: run.id, agentId: run.agentId, err: error }, `scenario test run failed: ${message}`);
      await this.tests.finishRun(run.id, { status: 'error', results: results as unknown as InputJsonValue, error: message }).catch((failure: unknown) => {
        // The deadline shows the run as an error on read, whatever happens here.
        this.logger.error({ runId: run.id, err: failure }, 'could not record the scenario test run as failed');
      });
    }
  }

  private async runScenario(organizationId: string, run: AgentTestRunRecord, suite: ScenarioSuite, scenario: Scenario, signal: AbortSignal): Promise<ScenarioResult> {
    // The caller's audio is ready before the call exists, so the agent never waits on synthesis.
    let audio: Int16Array[];
    try {
      audio = [];
      for (const turn of scenario.turns) audio.push(await this.voice.audioFor(turn, run.id));
    } catch (error) {
      return scenarioError(scenario.name, `the caller's audio could not be made: ${messageOf(error)}`);
    }
    const startedAt = new Date();
    const created = await this.webCalls.create(organizationId, run.agentId, scenario.variables ?? {}, { testRunId: run.id, now: startedAt });
    if (!created.admitted) return scenarioError(scenario.name, `the call was refused (${created.refusal.reason})`);
    const { callId, token } = created;
    let outcome;
    try {
      outcome = await ScenarioCaller.run({ url: this.webCallUrl(), callId, token, callStartedAt: startedAt.getTime(), turns: audio, turnTimeoutMs: suite.turnTimeoutMs, signal });
    } catch (error) {
      signal.throwIfAborted();
      return scenarioError(scenario.name, messageOf(error), callId);
    }
    const call = await this.endedCall(organizationId, callId, signal);
    if (!call) return scenarioError(scenario.name, `the call did not end within ${CALL_RECORD_WAIT_MS / 1000} s of the hang-up`, callId);
    const judged = judgeScenario(scenario.turns, outcome.windows, call);
    return {
      scenario: scenario.name,
      passed: judged.passed,
      callId,
      endReason: call.endReason,
      error: null,
      turns: judged.turns,
      transcript: call.transcript.map(({ role, source, text, heardText, interrupted, startMs }) => ({ role, source, text, heardText, interrupted, startMs })),
    };
  }

  /** The call once it has ended: its transcript and events are flushed before it is finalised. */
  private async endedCall(organizationId: string, callId: string, signal: AbortSignal): Promise<CallDetail | null> {
    const deadline = Date.now() + CALL_RECORD_WAIT_MS;
    for (;;) {
      signal.throwIfAborted();
      const call = await this.calls.findDetail(organizationId, callId);
      if (call?.endedAt) return call;
      if (Date.now() >= deadline) return null;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** This process's own web-call socket, over loopback: the scenario goes through the real edge. */
  private webCallUrl(): string {
    const address = this.http.httpAdapter.getHttpServer().address() as AddressInfo | null;
    if (!address) throw new Error('the server is not listening');
    const host = address.family === 'IPv6' && address.address === '::1' ? '[::1]' : '127.0.0.1';
    return `ws://${host}:${address.port}${WEB_CALL_PATH}`;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
