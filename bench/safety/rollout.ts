import { safetyV1 } from '@fastloop/proto';
import { AGENT_TOOLS } from '../agent-loop/agent-tools';
import { createWorkload } from '../agent-loop/workload';
import type { CorpusFile } from '../agent-loop/source-corpus';

/** The safety items one turn of an agent rollout adds, turn 0 being the user's request. */
export type RolloutTurns = readonly (readonly safetyV1.SafetyItem[])[];

/**
 * A coding-agent rollout as safety sees it: the user's task, then per turn the model's reasoning
 * and tool call and the tool's output (2–8 KB of real source, framed as that tool frames it),
 * as the agent-loop benchmark's workload builds them. Same seed, same rollout.
 */
export function agentRollout(corpus: readonly CorpusFile[], turns: number, seed = 1): RolloutTurns {
  const workload = createWorkload({ seed, corpus, outputBytes: [2048, 8192] });
  const out: safetyV1.SafetyItem[][] = [
    [{ itemType: 'message', role: 'user', text: workload.userPrompt, source: safetyV1.ItemSource.ITEM_SOURCE_INPUT }],
  ];
  for (let t = 1; t <= turns; t++) {
    const tool = AGENT_TOOLS[(t - 1) % AGENT_TOOLS.length];
    out.push([
      {
        itemType: 'reasoning',
        role: '',
        source: safetyV1.ItemSource.ITEM_SOURCE_MODEL,
        text: `Turn ${t}: next I will use ${tool.name} to look at what the task needs.`,
      },
      {
        itemType: 'function_call',
        role: '',
        source: safetyV1.ItemSource.ITEM_SOURCE_MODEL,
        text: JSON.stringify({ path: `apps/edge/src/turn/file-${t}.ts`, start_line: 1 }),
      },
      {
        itemType: 'function_call_output',
        role: '',
        text: workload.toolOutput(t, tool.name),
        source: safetyV1.ItemSource.ITEM_SOURCE_TOOL,
      },
    ]);
  }
  return out;
}

/** Header items (instructions + tools) of the rollout, classified once per distinct header. */
export function rolloutHeader(corpus: readonly CorpusFile[], seed = 1): safetyV1.SafetyItem[] {
  const workload = createWorkload({ seed, corpus, outputBytes: [2048, 8192] });
  return [
    {
      itemType: 'instructions',
      role: 'developer',
      text: workload.instructions,
      source: safetyV1.ItemSource.ITEM_SOURCE_INPUT,
    },
    ...workload.tools.map((t) => ({
      itemType: 'tool_definition',
      role: '',
      text: JSON.stringify(t),
      source: safetyV1.ItemSource.ITEM_SOURCE_TOOL,
    })),
  ];
}
