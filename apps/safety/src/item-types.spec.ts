import { safetyV1 } from '@fastloop/proto';
import { pemPrivateKey } from './testing/fake-secrets';
import { testClassifier } from './testing/test-classifier';

const classifier = testClassifier();
const SOURCES = Object.values(safetyV1.ItemSource).filter(
  (v): v is safetyV1.ItemSource => typeof v === 'number' && v >= 0,
);

// The edge sends one scan item per Responses item, labelled with its type and author; the rules
// must not depend on the label, so that a secret in an item type added later is still found, nor on
// whether the caller states the author (a caller from before the field does not).
describe('Classifier on every item type the edge sends', () => {
  it.each([
    ['message', 'assistant'],
    ['custom_tool_call', ''],
    ['custom_tool_call_output', ''],
    ['local_shell_call', ''],
    ['local_shell_call_output', ''],
    ['web_search_call', ''],
    ['mcp_call', ''],
    ['a_type_from_the_future', ''],
  ])('blocks a private key in a %s item', (itemType, role) => {
    for (const source of SOURCES) {
      const res = classifier.classify({
        state: Buffer.alloc(0),
        items: [{ itemType, role, text: `patch:\n${pemPrivateKey()}`, source }],
      });
      expect(res.verdict).toBe(safetyV1.Verdict.VERDICT_BLOCK);
      expect(res.findings[0]).toMatchObject({ ruleId: 'private-key-block', itemIndex: 0 });
    }
  });
});
