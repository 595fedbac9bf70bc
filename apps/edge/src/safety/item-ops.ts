import type { OutputSink, QueuedOp } from './output-sink';

type ItemOp = Exclude<QueuedOp, { text: string }>;

/**
 * The writer call each item op stands for: made once, where a closure per queued op was named at
 * run time by the bundles (and tsx) with a defineProperty call each.
 */
export const ITEM_OPS: Readonly<Record<ItemOp['item'], (sink: OutputSink, op: ItemOp) => void>> = {
  message: (sink) => sink.startMessage(),
  reasoning: (sink) => sink.startReasoning(),
  function_call: (sink, op) => sink.startFunctionCall(nameOf(op), namespaceOf(op)),
  custom_tool_call: (sink, op) => sink.startCustomToolCall(nameOf(op), namespaceOf(op)),
  end: (sink) => sink.endItem(),
};

function nameOf(op: ItemOp): string {
  return 'name' in op ? op.name : '';
}

function namespaceOf(op: ItemOp): string | undefined {
  return 'namespace' in op ? op.namespace : undefined;
}
