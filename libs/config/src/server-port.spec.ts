import { loadAppConfig } from './app-config';
import { DEFAULT_PORT, serverPortOf } from './server-port';

describe('serverPortOf: PORT as the server reads it', () => {
  it.each([
    [undefined, DEFAULT_PORT],
    ['', DEFAULT_PORT],
    ['4000', 4000],
    ['0', 0],
    ['http', undefined],
    ['70000', undefined],
  ])('PORT=%p -> %p, the port the server itself listens on', (value, port) => {
    expect(serverPortOf({ PORT: value })).toBe(port);
    if (port === undefined) expect(() => loadAppConfig({ PORT: value })).toThrow(/PORT/);
    else expect(loadAppConfig({ PORT: value }).port).toBe(port);
  });
});
