/** One server-sent event: `data` lines joined with '\n', as the HTML SSE spec dispatches it. */
export interface SseEvent {
  /** The `event:` field; 'message' when absent. */
  event: string;
  data: string;
  id?: string;
}

/**
 * Incremental text/event-stream decoder (HTML Living Standard, "event stream interpretation").
 * TCP delivers the stream in arbitrary pieces, so anything may be split anywhere: a multi-byte
 * UTF-8 character, a line, the CR and LF of one line ending. Bytes go in as they arrive; complete
 * events come out. Comment lines (`: keep-alive`) and unknown fields are ignored.
 */
export class SseDecoder {
  private readonly decoder = new TextDecoder('utf-8');
  private partialLine = '';
  /** The previous piece ended in CR: a LF starting the next piece belongs to that line ending. */
  private skipLeadingLf = false;
  private eventType = '';
  private data = '';
  private hasData = false;
  private lastEventId: string | undefined;

  push(bytes: Uint8Array): SseEvent[] {
    const events: SseEvent[] = [];
    this.consume(this.decoder.decode(bytes, { stream: true }), events);
    return events;
  }

  /**
   * The stream ended. A last event without its closing blank line is still delivered: several
   * servers end with `data: [DONE]\n` and nothing after it.
   */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    this.consume(this.decoder.decode(), events);
    if (this.partialLine !== '') {
      this.processLine(this.partialLine, events);
      this.partialLine = '';
    }
    this.dispatch(events);
    return events;
  }

  private consume(text: string, events: SseEvent[]): void {
    let start = 0;
    if (this.skipLeadingLf && text.length > 0) {
      if (text.charCodeAt(0) === LF) start = 1;
      this.skipLeadingLf = false;
    }
    for (let i = start; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code !== LF && code !== CR) continue;
      const line = this.partialLine + text.slice(start, i);
      this.partialLine = '';
      this.processLine(line, events);
      if (code === CR) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === LF) i++;
        } else {
          this.skipLeadingLf = true;
        }
      }
      start = i + 1;
    }
    this.partialLine += text.slice(start);
  }

  private processLine(line: string, events: SseEvent[]): void {
    if (line === '') {
      this.dispatch(events);
      return;
    }
    if (line.charCodeAt(0) === COLON) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === SPACE) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data = this.hasData ? `${this.data}\n${value}` : value;
        this.hasData = true;
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      default:
        // 'retry' only matters to browsers that reconnect by themselves; others are ignored per spec.
        break;
    }
  }

  private dispatch(events: SseEvent[]): void {
    if (this.hasData) {
      const event: SseEvent = { event: this.eventType || 'message', data: this.data };
      if (this.lastEventId !== undefined) event.id = this.lastEventId;
      events.push(event);
    }
    this.data = '';
    this.hasData = false;
    this.eventType = '';
  }
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
