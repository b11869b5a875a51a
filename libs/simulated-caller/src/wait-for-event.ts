import { EventEmitter } from 'node:events';
import { TwilioCallerError } from './twilio-caller.error';

/**
 * Resolves with the first `event` whose payload matches `predicate`; rejects with a TIMEOUT
 * TwilioCallerError after `timeoutMs`. The listener is always removed, so waiting cannot leak.
 */
export function waitForEvent<Events extends Record<keyof Events, unknown[]>, Name extends keyof Events & string>(
  emitter: EventEmitter<Events>,
  event: Name,
  predicate: (...args: Events[Name]) => boolean = () => true,
  timeoutMs = 5000,
): Promise<Events[Name][0]> {
  // EventEmitter's generic overloads are awkward to satisfy from generic code; the plain API is equivalent.
  const plain = emitter as unknown as EventEmitter;
  return new Promise((resolve, reject) => {
    const listener = (...args: unknown[]): void => {
      if (!predicate(...(args as Events[Name]))) return;
      cleanup();
      resolve(args[0]);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new TwilioCallerError('TIMEOUT', `No matching "${event}" within ${timeoutMs} ms`, { retryable: false }));
    }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      plain.off(event, listener);
    };
    plain.on(event, listener);
  });
}
