import { EventStream } from './event-stream';
import { formatSse } from './format-sse';

describe('formatSse', () => {
  it('frames an event as "event: <type>\\ndata: <json>\\n\\n" with one data line', () => {
    const event = new EventStream().outputTextDelta(
      { itemId: 'msg_1', outputIndex: 0, contentIndex: 0 },
      'line one\nline two',
    );
    const frame = formatSse(event);
    expect(frame).toBe(`event: response.output_text.delta\ndata: ${JSON.stringify(event)}\n\n`);
    expect(frame.split('\n')).toHaveLength(4);
    expect(JSON.parse(frame.split('\n')[1]!.slice('data: '.length))).toEqual(event);
  });
});
