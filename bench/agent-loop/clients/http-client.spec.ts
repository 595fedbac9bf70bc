import { SseParser } from './http-client';

describe('SseParser', () => {
  it('yields each event with its type, whatever the chunk boundaries', () => {
    const events: [string, string][] = [];
    const parser = new SseParser((type, data) => events.push([type, data]));
    const stream =
      'event: response.created\ndata: {"type":"response.created"}\n\n: keep-alive\n\nevent: response.output_text.delta\ndata: {"delta":"a\\nb"}\n\n';
    for (let i = 0; i < stream.length; i += 7) parser.push(stream.slice(i, i + 7));
    expect(events).toEqual([
      ['response.created', '{"type":"response.created"}'],
      ['response.output_text.delta', '{"delta":"a\\nb"}'],
    ]);
  });

  it('takes the type from the data when there is no event line', () => {
    const events: string[] = [];
    new SseParser((type) => events.push(type)).push('data: {"type":"response.completed"}\n\n');
    expect(events).toEqual(['response.completed']);
  });
});
