/**
 * The caller thread: places the calls main asks for (the same scripted call as ever), waits on the
 * server's progress by asking main, and reports each call's outcome. Also measures its own GC and
 * event loop per run, to show what no longer lands on the server's thread.
 */
import { setPriority } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';
import { loadCallerFixtures } from './caller-fixtures';
import { ANSWER_MARGIN_MS, clockAnchor, PendingReplies, type CallerToMain, type MainToCaller } from './caller-protocol';
import { GcPauses } from './gc-pauses';
import { runScriptedCall, type ServerProgress } from './scripted-call';

const port = parentPort;
if (!port) throw new Error('caller-worker must run in a worker thread');
const post = (message: CallerToMain): void => port.postMessage(message);

const fixtures = loadCallerFixtures();
const latencyWaits = new PendingReplies<void>();
const server: ServerProgress = {
  whenLatencies: (callId, count, timeoutMs) =>
    latencyWaits.request(
      (requestId) => post({ type: 'await-latencies', requestId, callId, count, timeoutMs }),
      timeoutMs + ANSWER_MARGIN_MS,
      `main did not answer the wait for reply ${count} of call ${callId} within ${timeoutMs + ANSWER_MARGIN_MS} ms`,
    ),
};

let gc: GcPauses | undefined;
const loopDelay = monitorEventLoopDelay({ resolution: 1 });

port.on('message', (message: MainToCaller) => {
  switch (message.type) {
    case 'set-niceness':
      post({ type: 'niceness-set', requestId: message.requestId, ...lowerThisThreadsPriority(message.niceness) });
      return;
    case 'call':
      runScriptedCall(message.call, server, fixtures).then(
        (outcome) => post({ type: 'call-done', requestId: message.requestId, outcome }),
        // runScriptedCall catches what its script throws; this is a bug in it, still reported per call.
        (error: unknown) => post({ type: 'call-done', requestId: message.requestId, outcome: { callId: message.call.callId, bargeInSpeechSentAtMs: undefined, error: `caller thread: ${String(error)}` } }),
      );
      return;
    case 'latencies-reached':
      latencyWaits.settle(message.requestId, undefined);
      return;
    case 'latencies-failed':
      latencyWaits.settle(message.requestId, new Error(message.error));
      return;
    case 'measure-start':
      gc?.stop();
      gc = new GcPauses();
      gc.start();
      loopDelay.reset();
      loopDelay.enable();
      return;
    case 'measure-stop': {
      loopDelay.disable();
      gc?.stop();
      const pauses = gc?.pauses ?? [];
      post({
        type: 'measured',
        requestId: message.requestId,
        figures: {
          gcPauses: pauses.length,
          gcTotalMs: pauses.reduce((sum, pause) => sum + pause.durationMs, 0),
          gcMaxMs: pauses.reduce((max, pause) => Math.max(max, pause.durationMs), 0),
          eventLoopP99Ms: loopDelay.percentile(99) / 1e6,
          eventLoopMaxMs: loopDelay.max / 1e6,
        },
      });
      return;
    }
  }
});

post({ type: 'ready', clock: clockAnchor() });

/**
 * On Linux, setpriority(PRIO_PROCESS, 0) (what os.setPriority(n) calls) sets the calling thread's
 * nice value only: the server's threads keep theirs. Main checks the platform before asking.
 */
function lowerThisThreadsPriority(niceness: number): { error?: string } {
  try {
    setPriority(niceness);
    return {};
  } catch (error) {
    return { error: `could not set the caller thread's niceness to ${niceness}: ${error instanceof Error ? error.message : String(error)}` };
  }
}
