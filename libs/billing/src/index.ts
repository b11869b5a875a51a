export * from './money';
export * from './price-catalog';
export * from './call-meters';
export * from './price-call';
export * from './ledger-correction';
