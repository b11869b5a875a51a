import { useEffect, useMemo, useRef, useState } from 'react';
import { api, messageOf, type AgentConfigVersion } from '../../api';
import { ErrorAlert } from '../error-alert';
import { sideBySide } from './side-by-side';

/**
 * Two config versions of an agent side by side (GET /v1/agents/:id/versions/:version), with the
 * changed lines marked: by default the one before the current and the current.
 */
export function VersionCompare({ apiKey, agentId, latest }: { apiKey: string; agentId: string; latest: number }) {
  const [left, setLeft] = useState(Math.max(1, latest - 1));
  const [right, setRight] = useState(latest);
  const [configs, setConfigs] = useState<Map<number, Record<string, unknown>>>(new Map());
  const [error, setError] = useState<string>();

  // A save made a new version: compare it with the one before.
  useEffect(() => {
    setLeft(Math.max(1, latest - 1));
    setRight(latest);
  }, [latest]);

  // Versions never change once saved: each is fetched once.
  const requested = useRef(new Set<number>());
  useEffect(() => {
    for (const version of [left, right]) {
      if (requested.current.has(version)) continue;
      requested.current.add(version);
      api<AgentConfigVersion>(`/v1/agents/${agentId}/versions/${version}`, { key: apiKey }).then(
        (loaded) => setConfigs((previous) => new Map(previous).set(version, loaded.config)),
        (caught: unknown) => {
          requested.current.delete(version);
          setError(messageOf(caught));
        },
      );
    }
  }, [apiKey, agentId, left, right]);

  const before = configs.get(left);
  const after = configs.get(right);
  const rows = useMemo(() => (before && after ? sideBySide(before, after) : undefined), [before, after]);
  const changed = rows?.filter((row) => row.kind !== 'same').length ?? 0;

  if (latest < 2) return <p className="hint">Only version 1 so far: saving a changed config makes version 2.</p>;
  const versions = Array.from({ length: latest }, (_, index) => latest - index);
  const picker = (label: string, value: number, choose: (version: number) => void) => (
    <label className="inline">
      {label}
      <select value={value} onChange={(event) => choose(Number(event.target.value))}>
        {versions.map((version) => (
          <option key={version} value={version}>
            version {version}
            {version === latest ? ' (current)' : ''}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <div className="version-compare">
      <div className="version-pickers">
        {picker('Left', left, setLeft)}
        {picker('Right', right, setRight)}
        {rows && <span className="hint">{changed === 0 ? 'No differences.' : `${changed} changed line${changed === 1 ? '' : 's'}.`}</span>}
      </div>
      <ErrorAlert message={error} />
      {rows ? (
        <table className="config-diff" data-testid="config-diff">
          <colgroup>
            <col className="line-number-col" />
            <col />
            <col className="line-number-col" />
            <col />
          </colgroup>
          <thead>
            <tr>
              <th colSpan={2}>Version {left}</th>
              <th colSpan={2}>Version {right}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row, index) => (
              <tr key={index} className={`diff-${row.kind}`}>
                <td className="line-number">{row.left?.number}</td>
                <td className={row.left && row.kind !== 'same' ? 'diff-old' : undefined}>{row.left?.text}</td>
                <td className="line-number">{row.right?.number}</td>
                <td className={row.right && row.kind !== 'same' ? 'diff-new' : undefined}>{row.right?.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        !error && <p className="empty">Loading…</p>
      )}
    </div>
  );
}
