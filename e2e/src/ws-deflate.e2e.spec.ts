import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { stackForThisFile } from './file-stack';
import { expectWellFormedStream, stackEnv, WsConversation } from './clients';

const MODEL = 'fastloop-sim';

stackForThisFile();

/** A raw `ws` client (what the openai SDK's ResponsesWS uses) offering deflate or not; one turn. */
async function turn(offer: boolean) {
  const { wsUrl, key } = stackEnv();
  const ws = new WebSocket(wsUrl, {
    headers: { authorization: `Bearer ${key}` },
    perMessageDeflate: offer,
  });
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const events: any[] = [];
    let textBytes = 0;
    const done = new Promise<void>((resolve) =>
      ws.on('message', (data: Buffer) => {
        textBytes += data.length;
        events.push(JSON.parse(data.toString()));
        if (/^(response\.(completed|failed|incomplete)|error)$/.test(events[events.length - 1].type)) resolve();
      }),
    );
    const instructions = 'You are a coding agent. Read the files before you change them. '.repeat(150);
    ws.send(JSON.stringify({ type: 'response.create', model: MODEL, store: false, instructions, input: 'Hello' }));
    await done;
    const wireBytes = (ws as unknown as { _socket: Socket })._socket.bytesRead;
    return { extensions: ws.extensions, events, textBytes, wireBytes, instructions };
  } finally {
    ws.close();
  }
}

describe('permessage-deflate on WebSocket mode', () => {
  it('is negotiated with a client that offers it; every frame round-trips and the turn takes fewer bytes', async () => {
    const t = await turn(true);
    expect(t.extensions).toContain('permessage-deflate');
    const done = expectWellFormedStream(t.events);
    expect(done.type).toBe('response.completed');
    expect(done.response.instructions).toBe(t.instructions);
    expect(t.wireBytes).toBeLessThan(t.textBytes / 2);
  });

  it('sends plain frames to a client that does not offer it', async () => {
    const t = await turn(false);
    expect(t.extensions).toBe('');
    expect(expectWellFormedStream(t.events).type).toBe('response.completed');
    expect(t.wireBytes).toBeGreaterThan(t.textBytes);
  });

  it('serves the openai SDK’s ResponsesWS (which offers deflate) for a chained turn', async () => {
    const conv = new WsConversation();
    try {
      const first = expectWellFormedStream(await conv.create({ model: MODEL, store: false, input: 'Hi' })).response;
      const second = expectWellFormedStream(
        await conv.create({ model: MODEL, store: false, previous_response_id: first.id, input: 'More' }),
      );
      expect(second.type).toBe('response.completed');
      expect(second.response.usage.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    } finally {
      conv.close();
    }
  });
});
