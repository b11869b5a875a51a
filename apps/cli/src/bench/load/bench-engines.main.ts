import { startBenchEngines } from './bench-engines';

/** Child-process entry: starts the fake engines and tells the parent their base URL. */
void startBenchEngines().then(({ baseUrl }) => process.send?.({ type: 'ready', baseUrl }));
