import { ApiErrors } from './api-error';
import { createResponseObject } from './create-response-object';
import { EventStream } from './event-stream';
import { ResponseStreamEventSchema } from './stream-event-schema';
import { validateRequest } from './validate-request';

function response() {
  return createResponseObject(validateRequest({ model: 'm', input: 'hi' }), { id: 'resp_1', model: 'm', createdAt: 1 });
}

describe('EventStream', () => {
  it('numbers events 0, 1, 2, … in build order', () => {
    const stream = new EventStream();
    const res = response();
    const events = [stream.created(res), stream.inProgress(res), stream.completed(res)];
    expect(events.map((e) => e.sequence_number)).toEqual([0, 1, 2]);
    expect(stream.nextSequenceNumber).toBe(3);
  });

  it('snapshots the response so later mutation does not change a built event', () => {
    const stream = new EventStream();
    const res = response();
    const created = stream.created(res);
    res.status = 'completed';
    res.output.push({ id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [] });
    expect(created.response.status).toBe('in_progress');
    expect(created.response.output).toEqual([]);
  });

  it.each(['completed', 'failed', 'incomplete'] as const)('allows nothing after a terminal %s event', (terminal) => {
    const stream = new EventStream();
    stream[terminal](response());
    expect(stream.terminated).toBe(true);
    expect(() => stream.completed(response())).toThrow(/already ended/);
    expect(() => stream.error(ApiErrors.server())).toThrow(/already ended/);
  });

  it('builds an error event with the error both flat (SDK type) and nested (real wire), plus status', () => {
    const event = new EventStream().error(ApiErrors.rateLimited(3));
    expect(event).toEqual({
      type: 'error',
      sequence_number: 0,
      status: 429,
      code: 'rate_limit_exceeded',
      message: event.message,
      param: null,
      error: { type: 'requests', code: 'rate_limit_exceeded', message: event.message, param: null },
    });
    expect(ResponseStreamEventSchema.parse(event)).toEqual(event);
  });

  it('builds reasoning text events with their content index', () => {
    const stream = new EventStream();
    const at = { itemId: 'rs_1', outputIndex: 0, contentIndex: 0 };
    expect(stream.reasoningTextDelta(at, 'hm')).toEqual({
      type: 'response.reasoning_text.delta',
      sequence_number: 0,
      item_id: 'rs_1',
      output_index: 0,
      content_index: 0,
      delta: 'hm',
    });
    expect(stream.reasoningTextDone(at, 'hm')).toMatchObject({
      type: 'response.reasoning_text.done',
      text: 'hm',
      sequence_number: 1,
    });
  });
});
