import { sumIntegers } from './money';
import { COST_COMPONENTS, type CostComponent, type CostLine } from './price-call';

/** One stored ledger line, as far as corrections care. */
export interface LedgerLineLike {
  component: CostComponent;
  quantity: number;
  amountMicros: number;
  unit: CostLine['unit'];
  unitPriceMicros: number;
  unitSize: number;
  pricePer: string;
}

export interface ComponentNet {
  quantity: number;
  amountMicros: number;
}

/** Net quantity and amount of each component over the lines (a charge plus its corrections), exact. */
export function netByComponent(
  lines: readonly Pick<LedgerLineLike, 'component' | 'quantity' | 'amountMicros'>[],
): Map<CostComponent, ComponentNet> {
  const nets = new Map<CostComponent, ComponentNet>();
  for (const line of lines) {
    const net = nets.get(line.component) ?? { quantity: 0, amountMicros: 0 };
    nets.set(line.component, {
      quantity: sumIntegers([net.quantity, line.quantity]),
      amountMicros: sumIntegers([net.amountMicros, line.amountMicros]),
    });
  }
  return nets;
}

const NOTHING: ComponentNet = { quantity: 0, amountMicros: 0 };

function latestLineOf(lines: readonly LedgerLineLike[], component: CostComponent): LedgerLineLike {
  for (let index = lines.length - 1; index >= 0; index--) {
    const line = lines[index];
    if (line?.component === component) return line;
  }
  // A non-zero difference needs a line of the component on one side or the other.
  throw new Error(`no ledger line for component ${component}`);
}

/**
 * Lines that bring a ledger (original charge + earlier corrections) to `repriced`: for each component, the
 * difference between the repriced line and the NET of the stored lines of that component (quantity and amount
 * differences, which may be negative), with the repriced line's unit/unitPrice/unitSize/pricePer (the stored
 * one's when the component disappeared). No line for components whose net already matches. Never edits lines:
 * the ledger is append-only, so running this again on the corrected ledger yields nothing.
 */
export function correctionLines(stored: readonly LedgerLineLike[], repriced: readonly CostLine[]): CostLine[] {
  const storedNets = netByComponent(stored);
  const targetNets = netByComponent(repriced);
  const corrections: CostLine[] = [];
  for (const component of COST_COMPONENTS) {
    const target = targetNets.get(component) ?? NOTHING;
    const current = storedNets.get(component) ?? NOTHING;
    const quantity = sumIntegers([target.quantity, -current.quantity]);
    const amountMicros = sumIntegers([target.amountMicros, -current.amountMicros]);
    if (quantity === 0 && amountMicros === 0) continue;
    // The price the ledger now stands at; for a vanished component, the one it was charged at (latest line).
    const template = repriced.find((line) => line.component === component) ?? latestLineOf(stored, component);
    const { unit, unitPriceMicros, unitSize, pricePer } = template;
    corrections.push({ component, quantity, unit, unitPriceMicros, unitSize, pricePer, amountMicros });
  }
  return corrections;
}
