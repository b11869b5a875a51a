import { connectStreamTwiml, mediaStreamUrl, STREAM_PARAM_CALL_ID, STREAM_PARAM_TOKEN } from '@switchboard/telephony';

/**
 * The <Connect><Stream> answer for an accepted call, inbound or outbound: the media URL plus the
 * call id and its single-use token, which the media socket presents in `start`.
 */
export function streamToCallTwiml(publicBaseUrl: string, callId: string, streamToken: string): string {
  return connectStreamTwiml({
    streamUrl: mediaStreamUrl(publicBaseUrl),
    parameters: { [STREAM_PARAM_CALL_ID]: callId, [STREAM_PARAM_TOKEN]: streamToken },
  });
}
