/**
 * What an agent may do to the phone call itself (as opposed to its audio). Implemented by the
 * server with Twilio's REST API; the runtime only decides when.
 */
export interface CallControl {
  /**
   * Ends the call. Resolves once the telephony side accepted it (or the call was already over).
   * The media stream closes afterwards; `reason` becomes the call's end reason.
   */
  hangUp(reason: string): Promise<void>;
  /** Cold transfer: the caller is connected to `to` (E.164) and this agent leaves the call. */
  transfer(to: string): Promise<void>;
}

export class CallControlError extends Error {
  override readonly name = 'CallControlError';
  constructor(
    message: string,
    /** True when the call was already over (Twilio 20404): nothing left to do. */
    readonly callAlreadyEnded = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
