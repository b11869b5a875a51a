import type { TranscriptTurn } from '../api';

/** The call's transcript as the server has recorded it so far: who said what, newest last. */
export function TalkTranscript({ turns, live }: { turns: TranscriptTurn[]; live: boolean }) {
  return (
    <ol className="transcript talk-transcript" data-testid="talk-transcript" aria-live={live ? 'polite' : 'off'}>
      {turns.map((turn) => (
        <li key={turn.index} className={turn.role}>
          <span className="role">{turn.role === 'user' ? 'You' : turn.role === 'assistant' ? 'Agent' : turn.role}</span>
          <span className="at">{(turn.startMs / 1000).toFixed(1)} s</span>
          <span>
            {turn.interrupted ? (turn.heardText ?? '') : turn.text}
            {turn.interrupted && <span className="cut"> — interrupted</span>}
          </span>
        </li>
      ))}
    </ol>
  );
}
