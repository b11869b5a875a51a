import RequestClient from 'twilio/lib/base/RequestClient';
import type Response from 'twilio/lib/http/response';

/** Twilio's REST host, with the edge/region labels twilio-node may insert (api.sydney.au1.twilio.com). */
const TWILIO_API_ORIGIN = /^https:\/\/api(?:\.[a-z0-9-]+)*\.twilio\.com(?=\/|$)/;

/**
 * twilio-node has no base-URL option; its maintainers' advice is a custom `httpClient` that rewrites
 * the URL (twilio/twilio-node#326). This one sends api.twilio.com requests to `apiBaseUrl` (a local
 * fake in tests) and refuses any other Twilio host, so a redirected client can never quietly reach
 * the real Twilio with real credentials.
 */
export class ApiBaseUrlRequestClient extends RequestClient {
  private readonly apiBaseUrl: string;

  constructor(apiBaseUrl: string, options?: RequestClient.RequestClientOptions) {
    super(options);
    this.apiBaseUrl = apiBaseUrl.replace(/\/+$/, '');
  }

  override request<TData>(opts: RequestClient.RequestOptions<TData>): Promise<Response<TData>> {
    if (!TWILIO_API_ORIGIN.test(opts.uri)) {
      return Promise.reject(new Error(`only api.twilio.com requests can go to the configured Twilio API base URL, not ${opts.uri.split('/')[2] ?? 'that URL'}`));
    }
    return super.request({ ...opts, uri: opts.uri.replace(TWILIO_API_ORIGIN, this.apiBaseUrl) });
  }
}
