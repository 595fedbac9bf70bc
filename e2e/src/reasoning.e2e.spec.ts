import { stackForThisFile } from './file-stack';
import { openaiClient } from './clients';

const MODEL = 'fastloop-sim';

stackForThisFile();

describe('reasoning items sent back by a stateless client (include reasoning.encrypted_content, store false)', () => {
  const question = { role: 'user' as const, content: 'What is 2+2?' };
  const reasoning = (extra: Record<string, unknown>) => ({
    type: 'reasoning' as const,
    id: 'rs_1',
    summary: [{ type: 'summary_text' as const, text: 'add them' }],
    ...extra,
  });

  it('answers a reasoning item without encrypted_content as before', async () => {
    const r = await openaiClient().responses.create({
      model: MODEL,
      input: [question, reasoning({})],
      include: ['reasoning.encrypted_content'],
      store: false,
    });
    expect(r.status).toBe('completed');
  });

  it('answers an encrypted_content this deployment did not seal with a 400 naming the item', async () => {
    const sent = openaiClient().responses.create({
      model: MODEL,
      input: [question, reasoning({ encrypted_content: 'gAAAAABnot-a-fastloop-blob' })],
      include: ['reasoning.encrypted_content'],
      store: false,
    });
    await expect(sent).rejects.toMatchObject({
      status: 400,
      code: 'invalid_encrypted_content',
      param: 'input[1].encrypted_content',
    });
  });
});
