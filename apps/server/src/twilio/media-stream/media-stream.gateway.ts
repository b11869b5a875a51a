import type { IncomingMessage } from 'node:http';
import { OnGatewayConnection, WebSocketGateway } from '@nestjs/websockets';
import { MEDIA_STREAM_PATH } from '@switchboard/telephony';
import type { WebSocket } from 'ws';
import { MediaStreamService } from './media-stream.service';
import { verifiedStreamAccount } from './twilio-media-ws.adapter';

/** Close code for a socket that was never verified (cannot happen through the adapter; refused all the same). */
const CLOSE_POLICY = 1008;

/**
 * `WS /twilio/media` (and `/twilio/media/<AccountSid>`). The upgrade was already signature-checked
 * by TwilioMediaWsAdapter, which noted the account it was signed by; from here the Twilio transport's own
 * protocol session reads Twilio's frames, and may only claim that account's calls.
 */
@WebSocketGateway({ path: MEDIA_STREAM_PATH })
export class MediaStreamGateway implements OnGatewayConnection<WebSocket> {
  constructor(private readonly mediaStreams: MediaStreamService) {}

  handleConnection(socket: WebSocket, request: IncomingMessage): void {
    const account = verifiedStreamAccount(request);
    if (!account) {
      socket.close(CLOSE_POLICY);
      return;
    }
    this.mediaStreams.accept(socket, account);
  }
}
