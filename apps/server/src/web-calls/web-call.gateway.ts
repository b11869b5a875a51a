import { OnGatewayConnection, WebSocketGateway } from '@nestjs/websockets';
import type { WebSocket } from 'ws';
import { WEB_CALL_PATH } from './web-call-protocol';
import { WebCallService } from './web-call.service';

/**
 * `WS /v1/web-calls`: the browser's call socket. The upgrade itself is open (a browser cannot set
 * headers on a WebSocket); the first message must present the call's one-time token, which only an
 * API key could mint (see WebCallTransport).
 */
@WebSocketGateway({ path: WEB_CALL_PATH })
export class WebCallGateway implements OnGatewayConnection<WebSocket> {
  constructor(private readonly webCalls: WebCallService) {}

  handleConnection(socket: WebSocket): void {
    this.webCalls.accept(socket);
  }
}
