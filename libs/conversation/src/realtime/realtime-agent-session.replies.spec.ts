/**
 * A realtime call on scripted parts (libs/testing/src/conversation/realtime-call.ts): a slow tool and its filler
 * line, the model's audio on the call, and failed responses.
 */
import { settle } from '@switchboard/testing';
import { FILLER, SlowLookupTool, useRealtimeCalls, type CallUnderTest } from '../../../testing/src/conversation/realtime-call';

describe('RealtimeAgentSession', () => {
  const startCall = useRealtimeCalls();

  describe('a slow tool', () => {
    it('says the filler line after a second, then gives the model the result once the filler is generated', async () => {
      const tools = new SlowLookupTool();
      const c = await startCall({ tools });
      c.model.toolCall('resp-1', 'call_1', 'lookup_order');
      c.model.done('resp-1');
      await c.wait(999);
      expect(c.model.responseRequests).toEqual([]);
      await c.wait(1);
      expect(c.model.responseRequests).toEqual([`Say exactly this, and nothing else: "${FILLER}"`]);

      // The result arrives while the filler is still being generated: it waits for the filler's end.
      await c.modelSpeaks('resp-2', 10, FILLER);
      tools.finish();
      await settle();
      expect(c.model.toolResults).toEqual([]);
      c.model.done('resp-2');
      await settle();
      expect(c.model.toolResults).toEqual([{ callId: 'call_1', output: '{"result":{"status":"shipped"}}' }]);

      c.output.echoPlayed();
      await settle();
      expect(c.recorder.turns).toEqual([expect.objectContaining({ role: 'assistant', source: 'tool_filler', text: FILLER, interrupted: false })]);
    });

    it('skips the filler when the model is still answering', async () => {
      const tools = new SlowLookupTool();
      const c = await startCall({ tools });
      // The tool call's response is still being generated a second later.
      c.model.toolCall('resp-1', 'call_1', 'lookup_order');
      await c.wait(1500);
      expect(c.model.responseRequests).toEqual([]);
      expect(c.eventsOf('tool_filler_skipped')).toEqual([{ reason: 'response_active' }]);
      tools.finish();
      await settle();
      expect(c.model.toolResults).toHaveLength(1);
    });

    it('says nothing extra for a tool that answers within a second', async () => {
      const tools = new SlowLookupTool();
      const c = await startCall({ tools });
      c.model.toolCall('resp-1', 'call_1', 'lookup_order');
      c.model.done('resp-1');
      await c.wait(500);
      tools.finish();
      await c.wait(2000);
      expect(c.model.responseRequests).toEqual([]);
      expect(c.model.toolResults).toHaveLength(1);
    });
  });

  describe("the model's audio on the call", () => {
    /** The output's log with consecutive plays folded into one. */
    const shape = (c: CallUnderTest) => c.output.sequence.filter((entry, index, all) => entry !== 'play' || all[index - 1] !== 'play');

    it('passes the mu-law through with a mark every 250 ms inside the chunks, and ends the utterance once the response is done', async () => {
      const c = await startCall();
      // Three 100 ms chunks: the 250 ms mark falls inside the third.
      await c.modelSpeaks('resp-1', 3);
      expect(c.output.playedSamples).toBe(2400);
      expect(shape(c)).toEqual(['play', 'mark:rt1:1', 'play']);
      c.model.done('resp-1');
      await settle();
      expect(shape(c)).toEqual(['play', 'mark:rt1:1', 'play', 'mark:rt1:2', 'end']);
      c.output.echoPlayed();
      await settle();
      expect(c.recorder.turns).toEqual([expect.objectContaining({ role: 'assistant', interrupted: false })]);
    });

    it('does not end the utterance of a response cut by barge-in: the clear discards it', async () => {
      const c = await startCall();
      await c.modelSpeaks('resp-1', 20);
      await c.talk(500);
      expect(c.output.clears).toBe(1);
      c.model.done('resp-1', 'cancelled');
      await settle();
      const afterClear = c.output.sequence.slice(c.output.sequence.indexOf('clear') + 1);
      expect(afterClear.filter((entry) => entry === 'play' || entry === 'end')).toEqual([]);
    });
  });

  describe('the longest reply (maxReplyMs)', () => {
    it('cuts the model audio at exactly maxReplyMs, stops the response, tells the model what was heard, and says so', async () => {
      const c = await startCall({ config: { maxReplyMs: 1000 } });
      // 2.5 s of audio from a response that does not end by itself.
      await c.modelSpeaks('resp-1', 25);
      expect(c.output.playedSamples).toBe(8000);
      expect(c.model.cancels).toBe(1);
      expect(c.model.truncations).toEqual([{ itemId: 'resp-1-item', audioEndMs: 1000 }]);
      expect(c.eventsOf('reply_limit_reached')).toEqual([expect.objectContaining({ itemId: 'resp-1-item', responseId: 'resp-1', maxReplyMs: 1000 })]);
      // The cancelled response ends: what was sent plays out, nothing was cleared.
      c.model.done('resp-1', 'cancelled');
      await settle();
      expect(c.output.clears).toBe(0);
      expect(c.output.sequence.at(-1)).toBe('end');
      c.output.echoPlayed();
      await settle();
      expect(c.recorder.turns).toEqual([expect.objectContaining({ role: 'assistant', interrupted: false })]);
    });
  });

  describe('a failed response', () => {
    const apology = (message: string): string => `Say exactly this, and nothing else: "${message}"`;

    it('asks the model for the apology, and a working answer ends the run of failures', async () => {
      const c = await startCall({ config: { apologyMessage: 'Sorry, say that again?' } });
      const answer = async (responseId: string, text: string): Promise<void> => {
        await c.modelSpeaks(responseId, 2, text);
        c.model.done(responseId);
        c.output.echoPlayed();
        await settle();
      };
      const fail = async (responseId: string): Promise<void> => {
        c.model.done(responseId, 'failed');
        await settle();
      };

      await fail('resp-1');
      expect(c.model.responseRequests).toEqual([apology('Sorry, say that again?')]);
      expect(c.eventsOf('realtime_response_failed')).toEqual([{ responseId: 'resp-1' }]);
      await answer('resp-2', 'Sorry, say that again?');
      await fail('resp-3');
      await answer('resp-4', 'Sorry, say that again?');
      // The model answers the caller: the run of failures is over.
      await answer('resp-5', 'We open at nine.');
      await fail('resp-6');
      await answer('resp-7', 'Sorry, say that again?');
      await fail('resp-8');

      expect(c.callControl.hangUps).toEqual([]);
      expect(c.model.responseRequests).toHaveLength(4);
      expect(c.recorder.turns.map((turn) => [turn.source, turn.text])).toEqual([
        ['apology', 'Sorry, say that again?'],
        ['apology', 'Sorry, say that again?'],
        ['speech', 'We open at nine.'],
        ['apology', 'Sorry, say that again?'],
      ]);
    });

    it('hangs up with agent_error after three failed responses in a row', async () => {
      const c = await startCall();
      for (const id of ['resp-1', 'resp-2', 'resp-3']) {
        c.model.done(id, 'failed');
        await settle();
      }
      expect(c.model.responseRequests).toHaveLength(2);
      expect(c.eventsOf('agent_gave_up')).toEqual([{ consecutiveFailures: 3 }]);
      expect(c.callControl.hangUps).toEqual(['agent_error']);
      expect(c.endReasons).toEqual(['agent_error']);
    });
  });
});
