import type { IncomingMessage } from 'node:http';
import { OnGatewayConnection, WebSocketGateway } from '@nestjs/websockets';
import type { WebSocket } from 'ws';
import { MediaStreamService } from './media-stream.service';

/**
 * `WS /twilio/media`. The upgrade was already signature-checked by TwilioMediaWsAdapter; from here
 * the connection's own protocol session reads Twilio's frames.
 */
@WebSocketGateway({ path: '/twilio/media' })
export class MediaStreamGateway implements OnGatewayConnection<WebSocket> {
  constructor(private readonly mediaStreams: MediaStreamService) {}

  handleConnection(socket: WebSocket, _request: IncomingMessage): void {
    this.mediaStreams.accept(socket);
  }
}
