/**
 * A Server-Sent Events reader over fetch, for tests: parses the stream into messages
 * (id, event, data) and comments as bytes arrive, and hands them out one at a time.
 */
export interface SseMessage {
  id: string | undefined;
  event: string;
  data: string;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** The next message (comments skipped); null once the stream has ended. */
  next(): Promise<SseMessage | null>;
  /** The next comment line (without its leading colon), messages skipped; null at the end. */
  nextComment(): Promise<string | null>;
  /** Goes away (aborts the request). */
  close(): void;
}

type Item = { kind: 'message'; message: SseMessage } | { kind: 'comment'; text: string };

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  const items = parse(response.body!, abort.signal);
  const pull = async <K extends Item['kind']>(kind: K): Promise<Extract<Item, { kind: K }> | null> => {
    for (;;) {
      const { value, done } = await items.next();
      if (done) return null;
      if (value.kind === kind) return value as Extract<Item, { kind: K }>;
    }
  };
  return {
    status: response.status,
    headers: response.headers,
    next: async () => (await pull('message'))?.message ?? null,
    nextComment: async () => (await pull('comment'))?.text ?? null,
    close: () => abort.abort(),
  };
}

async function* parse(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<Item> {
  const decoder = new TextDecoder();
  let buffer = '';
  let fields: Partial<SseMessage> & { data?: string } = {};
  try {
    for await (const chunk of body) {
      buffer += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line === '') {
          if (fields.data !== undefined)
            yield { kind: 'message', message: { id: fields.id, event: fields.event ?? 'message', data: fields.data } };
          fields = {};
        } else if (line.startsWith(':')) {
          yield { kind: 'comment', text: line.slice(1).trim() };
        } else {
          const colon = line.indexOf(':');
          const name = line.slice(0, colon);
          const value = line.slice(colon + 1).replace(/^ /, '');
          if (name === 'data') fields.data = fields.data === undefined ? value : `${fields.data}\n${value}`;
          else if (name === 'id' || name === 'event') fields[name] = value;
        }
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}
