/**
 * The inference capacity of the server instance that answered GET /v1/organization, in words for
 * the Usage page: an admin wondering why callers heard "all our agents are busy" sees how full the
 * instance's inference workers are and how many more calls it admits, without curl and /metrics.
 */

/** The fields of GET /v1/organization's `inferenceCapacity` the page reads. */
export interface InferenceCapacity {
  state: 'measuring' | 'measured';
  workers: number;
  maxUtilisation: number;
  utilisation: number;
  predictedUtilisation: number | null;
  callsHeadroom: number | null;
}

const percent = (share: number) => `${Math.round(share * 100)} %`;

export function inferenceCapacityText(capacity: InferenceCapacity): string {
  const workers = `${capacity.workers} inference worker${capacity.workers === 1 ? '' : 's'}`;
  if (capacity.workers === 0) return 'No local model has run on this instance yet: calls are admitted by the concurrency limit alone.';
  const busy = `${percent(capacity.utilisation)} of ${workers} busy over the last 30 s`;
  if (capacity.state === 'measuring') return `${busy}; no call's cost measured yet on this instance, so calls are admitted.`;
  const planned = `${percent(capacity.predictedUtilisation ?? capacity.utilisation)} planned of the ${percent(capacity.maxUtilisation)} allowed`;
  if (capacity.callsHeadroom === null) return `${busy}, ${planned}; only streaming models run, so calls are admitted.`;
  const room = capacity.callsHeadroom === 0 ? 'new calls are refused for capacity now' : `room for ${capacity.callsHeadroom} more call${capacity.callsHeadroom === 1 ? '' : 's'}`;
  return `${busy}, ${planned}: ${room}.`;
}
