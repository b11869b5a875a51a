/**
 * A live call's labels on `switchboard_live_calls`: bounded sets only (never a call id or a number),
 * so a Prometheus series exists per direction and engine, not per call.
 */
export interface LiveCallLabels {
  /** inbound, outbound or web. */
  direction: string;
  /** The agent engine: echo, pipeline, realtime. */
  engine: string;
}
