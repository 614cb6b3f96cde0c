// Reads the `data:` payloads of a server-sent event stream as its chunks pass by, without holding the stream:
// only the unfinished last line is kept between chunks.
export class SseTap {
  private partial = '';
  private readonly decoder = new TextDecoder();

  constructor(private readonly onData: (data: string) => void) {}

  push(chunk: Uint8Array): void {
    const text = this.partial + this.decoder.decode(chunk, { stream: true });
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.line(line);
  }

  end(): void {
    const rest = this.partial + this.decoder.decode();
    this.partial = '';
    if (rest !== '') this.line(rest);
  }

  private line(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (!line.startsWith('data:')) return;
    const data = line.slice(5).trimStart();
    if (data !== '' && data !== '[DONE]') this.onData(data);
  }
}
