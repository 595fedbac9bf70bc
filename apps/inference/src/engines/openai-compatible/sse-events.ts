/**
 * The `data:` payloads of a Server-Sent Events body, one per event, pulled only as the caller
 * asks for them (so a slow consumer slows the upstream read: back-pressure). `[DONE]` is passed
 * on like any payload: whether the stream ended properly is the caller's call.
 */
export async function* sseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (data.length > 0) {
          const payload = data.join('\n');
          data = [];
          yield payload;
        }
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
      }
    }
  }
  if (data.length > 0) yield data.join('\n');
}
