import { levelFraction, levelWord } from '../audio-level';

/**
 * Who is making sound: a bar on a decibel scale and a word ("speaking", "quiet"). Off (empty, "off")
 * when there is no call to listen to.
 */
export function LevelMeter({ who, level, on, testId }: { who: string; level: number; on: boolean; testId: string }) {
  const word = on ? levelWord(level) : 'off';
  return (
    <div className={`level-meter ${word}`} data-testid={testId} data-level={on ? level.toFixed(4) : '0'}>
      <span className="level-who">{who}</span>
      <span className="level-bar" role="meter" aria-label={`${who} level`} aria-valuemin={0} aria-valuemax={1} aria-valuenow={on ? levelFraction(level) : 0}>
        <span className="level-fill" style={{ width: `${Math.round((on ? levelFraction(level) : 0) * 100)}%` }} />
      </span>
      <span className="level-word">{word}</span>
    </div>
  );
}
