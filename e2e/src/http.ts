import type { Stack } from '@fastloop/launcher';

/** POST /v1/responses with a raw body (a string is sent as is); the status and parsed JSON answer. */
export async function postJson(
  stack: Stack,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${stack.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** POST /v1/responses with `stream: true`: the status and every SSE event, checked for `event:` = `type`. */
export async function postSse(stack: Stack, body: Record<string, unknown>): Promise<{ status: number; events: any[] }> {
  const res = await fetch(`${stack.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const text = await res.text();
  if (res.status !== 200) return { status: res.status, events: [JSON.parse(text)] };
  const events = text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const name = /^event: (.*)$/m.exec(block)?.[1];
      const event = JSON.parse(/^data: (.*)$/m.exec(block)![1]);
      if (name !== event.type) throw new Error(`SSE event name ${name} differs from its type ${event.type}`);
      return event;
    });
  return { status: res.status, events };
}
