import { connectStreamTwiml, mediaStreamUrl, STREAM_PARAM_CALL_ID, STREAM_PARAM_TOKEN } from '@switchboard/telephony';
import type { TwilioAccountCredentials } from '../accounts/twilio-account.service';

/**
 * The <Connect><Stream> answer for an accepted call, inbound or outbound: the media URL plus the
 * call id and its single-use token, which the media socket presents in `start`.
 */
export function streamToCallTwiml(
  publicBaseUrl: string,
  callId: string,
  streamToken: string,
  account: TwilioAccountCredentials,
  /** More <Parameter>s of ours (a warm transfer's `resumeTransfer`); the call id and token win a clash. */
  extraParameters: Record<string, string> = {},
): string {
  // An organization's own account gets its own media path, so the upgrade is verified with its token.
  const accountSid = account.owner.kind === 'organization' ? account.accountSid : undefined;
  return connectStreamTwiml({
    streamUrl: mediaStreamUrl(publicBaseUrl, accountSid),
    parameters: { ...extraParameters, [STREAM_PARAM_CALL_ID]: callId, [STREAM_PARAM_TOKEN]: streamToken },
  });
}
