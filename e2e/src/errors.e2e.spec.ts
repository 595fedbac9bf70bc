import { stackForThisFile } from './file-stack';
import WebSocket from 'ws';
import { stackEnv, WsConversation, expectWellFormedStream } from './clients';

const MODEL = 'fastloop-sim';

async function post(body: string, headers: Record<string, string> = {}) {
  const { url, key } = stackEnv();
  const res = await fetch(`${url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: res.status, body: (await res.json()) as any };
}

stackForThisFile();

describe('bad input gets a Responses-API error and everything survives', () => {
  it('answers malformed JSON with 400 invalid_json', async () => {
    const r = await post('{"model": ');
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  it('answers a body failing validation with 400 naming the parameter', async () => {
    const r = await post(JSON.stringify({ model: MODEL, input: 'hi', temperature: 'hot' }));
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe('temperature');
    const missing = await post(JSON.stringify({ input: 'hi' }));
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe('model');
  });

  it('answers an unknown model with model_not_found', async () => {
    const r = await post(JSON.stringify({ model: 'no-such-model', input: 'hi' }));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'model_not_found', param: 'model' });
  });

  it('refuses a wrong API key with 401, over HTTP and on the WebSocket upgrade', async () => {
    const r = await post(JSON.stringify({ model: MODEL, input: 'hi' }), { authorization: 'Bearer wrong' });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('invalid_api_key');
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(stackEnv().wsUrl, { headers: { authorization: 'Bearer wrong' } });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(401);
  });

  it('blocks input that carries a private key, before any response is created', async () => {
    const pem = ['-----BEGIN RSA PRIVATE', 'KEY-----\nMIIEow\n-----END RSA PRIVATE', 'KEY-----'].join(' ');
    const r = await post(JSON.stringify({ model: MODEL, input: `here is my key ${pem}` }));
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_prompt');
  });

  it('keeps a WebSocket open through malformed frames, unknown events and bad bodies', async () => {
    const conv = new WsConversation();
    try {
      conv.ws.sendRaw('this is not json');
      const e1 = await conv.next();
      expect(e1).toMatchObject({ type: 'error', status: 400, error: { code: 'invalid_json' } });
      conv.ws.sendRaw(JSON.stringify({ type: 'session.update' }));
      const e2 = await conv.next();
      expect(e2).toMatchObject({ type: 'error', status: 400 });
      expect(e2.error).toMatchObject({ param: 'type', code: 'invalid_value' });
      const e3 = (await conv.create({ model: MODEL, input: 'x', max_output_tokens: 'many' }))[0];
      expect(e3).toMatchObject({ type: 'error', status: 400, error: { param: 'max_output_tokens' } });
      const e4 = (await conv.create({ model: MODEL, input: 'x', previous_response_id: 'resp_missing' }))[0];
      expect(e4).toMatchObject({
        type: 'error',
        status: 400,
        error: {
          code: 'previous_response_not_found',
          param: 'previous_response_id',
          message: "Previous response with id 'resp_missing' not found.",
        },
      });
      const e5 = (await conv.create({ model: MODEL, input: 'x', background: true }))[0];
      expect(e5).toMatchObject({ type: 'error', status: 400 });
      const e6 = (await conv.create({ model: 'no-such-model', input: 'x' }))[0];
      expect(e6).toMatchObject({ type: 'error', status: 400, error: { code: 'model_not_found' } });
      // Still open and serving.
      const ok = await conv.create({ model: MODEL, input: 'still there?', store: false, client_metadata: { x: 1 } });
      expect(expectWellFormedStream(ok).type).toBe('response.completed');
    } finally {
      conv.close();
    }
  });
});
