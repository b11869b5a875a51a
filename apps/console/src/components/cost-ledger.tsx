import type { CallCost, CostLine } from '../api';
import { formatLineAmount, formatPrecise, formatTotal } from '../money';

/** A line's quantity in the unit a reader thinks in (the ledger counts audio in ms, time in µs). */
function quantityText(line: CostLine): string {
  switch (line.unit) {
    case 'audio_ms':
      return `${(line.quantity / 1000).toFixed(1)} s of audio`;
    case 'microsecond':
      return `${(line.quantity / 1_000_000).toFixed(1)} s`;
    case 'minute':
      return `${line.quantity} min`;
    default:
      return `${line.quantity.toLocaleString()} ${line.unit}${line.quantity === 1 ? '' : 's'}`;
  }
}

/**
 * What the call cost, line by line: prices and line amounts to four decimals, the total in cents
 * (the exact six-decimal amounts are in each cell's title, and in the API).
 */
export function CostLedger({ cost }: { cost: CallCost }) {
  if (cost.lines.length === 0) return <p className="empty">{cost.status === 'pending' ? 'Priced when the call ends.' : 'No cost lines.'}</p>;
  return (
    <table data-testid="cost-ledger">
      <thead>
        <tr>
          <th>Component</th>
          <th>Kind</th>
          <th className="number">Quantity</th>
          <th className="number">Price</th>
          <th className="number">Amount ({cost.currency})</th>
        </tr>
      </thead>
      <tbody>
        {cost.lines.map((line) => (
          <tr key={line.id}>
            <td>{line.component}</td>
            <td>{line.kind === 'correction' ? `correction (${line.reason ?? ''})` : 'charge'}</td>
            <td className="number" title={`${line.quantity} ${line.unit}`}>
              {quantityText(line)}
            </td>
            <td className="number">
              {formatPrecise(line.unitPriceMicros)} / {line.pricePer}
            </td>
            <td className="number" title={line.amount}>
              {formatLineAmount(line.amountMicros)}
            </td>
          </tr>
        ))}
      </tbody>
      {cost.totalMicros !== null && (
        <tfoot>
          <tr>
            <th colSpan={4}>Total</th>
            <th className="number" data-testid="ledger-total" title={cost.total ?? undefined}>
              {formatTotal(cost.totalMicros, cost.currency)}
            </th>
          </tr>
        </tfoot>
      )}
    </table>
  );
}
