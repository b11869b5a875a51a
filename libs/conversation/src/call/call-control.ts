/**
 * What an agent may do to the phone call itself (as opposed to its audio). Implemented by the
 * server with the carrier's REST API; the runtime only decides when.
 */
export interface CallControl {
  /**
   * Ends the call. Resolves once the telephony side accepted it (or the call was already over).
   * The media stream closes afterwards; `reason` becomes the call's end reason.
   */
  hangUp(reason: string): Promise<void>;
  /** Cold transfer: the caller is connected to `to` (E.164) and this agent leaves the call. */
  transfer(to: string): Promise<void>;
  /**
   * Warm transfer: resolves once the caller is on hold and `to` is being dialled; this media stream
   * then ends without ending the call (the server connects the caller, or takes the call back to a
   * new stream of this agent). Absent on edges that cannot hold a call (the browser's web calls).
   */
  warmTransfer?(request: WarmTransferRequest): Promise<void>;
}

/** What a warm transfer needs besides the number (see TransferDestinationSchema for the settings). */
export interface WarmTransferPlan {
  /** Played by the carrier to the caller on hold; the carrier's own hold music when absent. */
  holdMusicUrl?: string;
  /** 'summary': the person who answers hears what the call is about before being connected. */
  whisper: 'summary' | 'none';
  /** How long `to` may ring before the agent takes the caller back. */
  answerTimeoutS: number;
  /** The model's summary of the call (bounded); the server builds one from the transcript when absent. */
  summary?: string;
}

export interface WarmTransferRequest extends WarmTransferPlan {
  to: string;
}

export class CallControlError extends Error {
  override readonly name = 'CallControlError';
  constructor(
    message: string,
    /** True when the call was already over (the carrier no longer knows it): nothing left to do. */
    readonly callAlreadyEnded = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
