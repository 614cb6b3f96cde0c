// Server-sent events as the HTML standard's event-stream parser reads them (§ 9.2.6, "Interpreting an event
// stream"): lines end in CRLF, LF or CR; a blank line dispatches the event; `:` starts a comment; one space
// after the colon is dropped; `data` lines join with LF; an event with no data is not dispatched. MCP's sse
// transport and a streamable-http answer sent as a stream both read their JSON-RPC messages from these events.
// (The gateway's SseTap is a line tap of `data:` payloads for usage counting, below this layer.)

export interface SseEvent {
  /** The `event` field; `message` when the event named none. */
  event: string;
  data: string;
  /** The last `id` seen on the stream, when one was. */
  id?: string;
}

/** Fed text as it arrives; returns the events each piece completes. Only the unfinished line is kept. */
export class SseParser {
  private partial = '';
  private skipLf = false;
  private started = false;
  private eventType = '';
  private data: string[] = [];
  private lastId: string | undefined;

  push(text: string): SseEvent[] {
    let chunk = text;
    if (!this.started && chunk.length > 0) {
      this.started = true;
      if (chunk.startsWith('\uFEFF')) chunk = chunk.slice(1);
    }
    if (this.skipLf && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.skipLf = chunk.endsWith('\r');
    const lines = (this.partial + chunk).split(/\r\n|\r|\n/);
    this.partial = lines.pop() ?? '';
    const out: SseEvent[] = [];
    for (const line of lines) {
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    return out;
  }

  /**
   * The stream ended. The standard drops an event the stream cut before its blank line; this returns it, as
   * Berth's streamable-http client always did, so a server that ends its answer without the blank line still works.
   */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.partial !== '') {
      const ev = this.line(this.partial);
      if (ev) out.push(ev);
      this.partial = '';
    }
    const last = this.line('');
    if (last) out.push(last);
    return out;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.eventType = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const event = this.eventType || 'message';
    const data = this.data;
    this.eventType = '';
    this.data = [];
    if (data.length === 0) return undefined;
    return { event, data: data.join('\n'), ...(this.lastId !== undefined ? { id: this.lastId } : {}) };
  }
}

/** Every event of a whole stream's text. */
export function parseSse(text: string): SseEvent[] {
  const parser = new SseParser();
  return [...parser.push(text), ...parser.end()];
}

/** The events of a response body as they arrive. */
export async function* sseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  for await (const chunk of body) yield* parser.push(decoder.decode(chunk, { stream: true }));
  yield* parser.push(decoder.decode());
  yield* parser.end();
}
