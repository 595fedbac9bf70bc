import type { OutputSink, QueuedOp } from './output-sink';

export type ItemOp = Exclude<QueuedOp, { text: string }>;

/**
 * The writer call each item op stands for: made once, where a closure per queued op was named at
 * run time by the bundles (and tsx) with a defineProperty call each. A table looked up by the
 * caller, not a function with a switch: the edge's code-bounds walk would follow that into the writer.
 */
export const ITEM_OPS: { readonly [K in ItemOp['item']]: (sink: OutputSink, op: ItemOp & { item: K }) => void } = {
  message: (sink) => sink.startMessage(),
  reasoning: (sink) => sink.startReasoning(),
  function_call: (sink, op) => sink.startFunctionCall(op.name, op.namespace),
  custom_tool_call: (sink, op) => sink.startCustomToolCall(op.name, op.namespace),
  end: (sink) => sink.endItem(),
};
