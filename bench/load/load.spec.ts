import { parseLoadOptions } from './options';
import { parseNodeMetrics, sampleProcess } from './process-stats';
import { buildLoadReport, renderLoadMarkdown } from './report';
import { renderLoadSvg } from './report-svg';
import type { LoopsResult } from './agent-loops';
import { gapLessFreezes } from './freeze-probe';
import { chunkCounters, timeWeightedPercentile } from './relay';
import { firstOutputByKind, splitFirstOutput } from './first-output-split';

const edge = {
  cpuMs: 900,
  eventLoopP50Ms: 1,
  eventLoopP99Ms: 12,
  eventLoopMaxMs: 40,
  rssBeforeBytes: 100 * 2 ** 20,
  rssPeakBytes: 180 * 2 ** 20,
  heapBeforeBytes: 40 * 2 ** 20,
  heapAfterBytes: 41 * 2 ** 20,
  settleMs: 3000,
  externalBeforeBytes: 2 ** 20,
  externalAfterBytes: 2 ** 20,
  rssAfterBytes: 120 * 2 ** 20,
};
const loops = (n: number, p99: number): LoopsResult => ({
  loops: n,
  durationS: 15,
  turns: 30 * n,
  errors: 0,
  errorKinds: {},
  turnsPerS: 2 * n,
  tokensPerS: 40 * n,
  firstOutputP50Ms: 60,
  firstOutputP99Ms: p99,
  edgeCpuMsPerTurn: 1.5,
  edge,
});

describe('parseLoadOptions', () => {
  it('defaults to 10, 100 and 500 loops, streams doubling to 256 and 10,000 idle connections', () => {
    expect(parseLoadOptions([], '/r')).toMatchObject({
      loops: [10, 100, 500],
      durationS: 60,
      turns: 20,
      streamTps: 4000,
      idle: 10_000,
      quick: false,
    });
    expect(parseLoadOptions([], '/r').streams).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256]);
  });

  it('keeps --quick short, and explicit options still win', () => {
    expect(parseLoadOptions(['--quick'], '/r')).toMatchObject({
      durationS: 15,
      relayDurationS: 4,
      idle: 2000,
      streams: [1, 2, 4, 8, 16, 32],
    });
    expect(parseLoadOptions(['--quick', '--loops', '5', '--idle=0'], '/r')).toMatchObject({ loops: [5], idle: 0 });
    expect(() => parseLoadOptions(['--loops', 'many'], '/r')).toThrow(/--loops/);
    expect(() => parseLoadOptions(['--bogus', '1'], '/r')).toThrow(/unknown option --bogus/);
  });

  it('profiles a level of 100 and one of 500 loops unless told, none with 0', () => {
    expect(parseLoadOptions([], '/r').profileLoops).toEqual([100, 500]);
    expect(parseLoadOptions(['--profile-loops', '50'], '/r').profileLoops).toEqual([50]);
    expect(parseLoadOptions(['--profile-loops', '0'], '/r').profileLoops).toEqual([]);
  });

  it('leaves the chunking to the stack unless told, and takes output moderation on or off', () => {
    expect(parseLoadOptions([], '/r')).toMatchObject({
      chunkTokens: undefined,
      outputModeration: true,
      moderationFlushMs: undefined,
    });
    expect(
      parseLoadOptions(['--chunk-tokens', '64', '--output-moderation', 'off', '--moderation-flush-ms=2'], '/r'),
    ).toMatchObject({
      chunkTokens: 64,
      outputModeration: false,
      moderationFlushMs: 2,
    });
    expect(() => parseLoadOptions(['--output-moderation', 'maybe'], '/r')).toThrow(
      /--output-moderation must be on or off/,
    );
  });
});

describe('process stats', () => {
  it('reads its own CPU time and resident memory from /proc', () => {
    const s = sampleProcess(process.pid);
    expect(s.rssBytes).toBeGreaterThan(1024 * 1024);
    expect(s.cpuMs).toBeGreaterThanOrEqual(0);
  });

  it("parses prom-client's event-loop metrics", () => {
    const m = parseNodeMetrics(
      'nodejs_eventloop_lag_p50_seconds{service="edge"} 0.0011\nnodejs_eventloop_lag_p99_seconds{service="edge"} 0.02\nnodejs_eventloop_lag_max_seconds{service="edge"} 2.5\nnodejs_heap_size_used_bytes{service="edge"} 5000\n',
    );
    expect(m.eventLoopP50Ms).toBeCloseTo(1.1);
    expect(m.eventLoopP99Ms).toBeCloseTo(20);
    expect(m.eventLoopMaxMs).toBeCloseTo(2500);
  });
});

describe('timeWeightedPercentile', () => {
  it('weighs each gap by its length, so splitting a frame into several written together changes nothing', () => {
    const frames = [10, 10, 10, 30];
    const split = [10, 0.01, 0.01, 10, 0.01, 10, 0.01, 0.01, 30];
    expect(timeWeightedPercentile(frames, 0.99)).toBe(30);
    expect(timeWeightedPercentile(split, 0.99)).toBe(30);
    expect(timeWeightedPercentile(split, 0.5)).toBe(timeWeightedPercentile(frames, 0.5));
    expect(timeWeightedPercentile([], 0.99)).toBeNaN();
  });
});

describe('chunkCounters', () => {
  it("sums the worker's completion tokens and TokenChunk messages over its engines", () => {
    const text =
      'inference_completion_tokens_total{engine="sim"} 400\ninference_token_chunks_total{engine="sim"} 20\ninference_token_chunks_total{engine="x"} 5\n';
    expect(chunkCounters(text)).toEqual({ tokens: 400, chunks: 25 });
  });
});

describe('a relay gap less the pauses of the machine', () => {
  it('takes out only the part of each pause inside the gap', () => {
    const freezes = [
      [100, 130],
      [190, 260],
      [400, 410],
    ] as const;
    expect(gapLessFreezes(0, 100, freezes)).toBe(100);
    expect(gapLessFreezes(90, 200, freezes)).toBe(110 - 30 - 10);
    expect(gapLessFreezes(200, 250, freezes)).toBe(0);
    expect(gapLessFreezes(300, 500, [])).toBe(200);
  });
});

describe('the load report', () => {
  const report = buildLoadReport(parseLoadOptions(['--quick'], '/r'), {
    loops: [loops(10, 80), loops(100, 120)],
    relay: {
      streamTps: 4000,
      ceilingTokensPerS: 60_000,
      ceilingStreams: 16,
      steps: [
        {
          streams: 1,
          tokensPerS: 3900,
          gapP50Ms: 0.5,
          gapP99Ms: 7,
          stallP50Ms: 5,
          stallP99Ms: 7,
          stallP99LessPausesMs: 6.5,
          machinePausedMs: 40,
          stealPercent: 1.5,
          addedP99Ms: 0,
          edgeCpuPercent: 3,
          edgeCpuMsPer1kTokens: 7.7,
          safetyCpuMsPer1kTokens: 1,
          moderationBatchesPerS: 100,
          tokensPerChunk: 21,
          tokensPerDelta: 63,
          errors: 0,
        },
        {
          streams: 16,
          tokensPerS: 60_000,
          gapP50Ms: 0.5,
          gapP99Ms: 8.5,
          stallP50Ms: 5,
          stallP99Ms: 8.5,
          stallP99LessPausesMs: 8,
          machinePausedMs: 0,
          stealPercent: 0,
          addedP99Ms: 1.5,
          edgeCpuPercent: 40,
          edgeCpuMsPer1kTokens: 6.7,
          safetyCpuMsPer1kTokens: 1,
          moderationBatchesPerS: 100,
          tokensPerChunk: 22,
          tokensPerDelta: 64,
          errors: 0,
        },
      ],
    },
    idle: {
      connections: 2000,
      failed: 0,
      rssBeforeBytes: 100 * 2 ** 20,
      rssAfterBytes: 140 * 2 ** 20,
      heapBeforeBytes: 40 * 2 ** 20,
      heapAfterBytes: 60 * 2 ** 20,
      rssPerConnectionBytes: 20_971,
      heapPerConnectionBytes: 10_485,
    },
  });

  it('says whether machine pauses were taken out of the relay gaps', () => {
    expect(renderLoadMarkdown(report)).toContain('In this run the probe ran reniced.');
    const notReniced = { ...report, relay: { ...report.relay!, pausesTakenOut: false } };
    expect(renderLoadMarkdown(notReniced)).toContain('the probe could not be reniced');
    expect(renderLoadMarkdown(notReniced)).not.toContain('In this run the probe ran reniced.');
  });

  it('says whether the client timing the frames ran reniced', () => {
    const boosted = { ...report, relay: { ...report.relay!, clientReniced: true } };
    expect(renderLoadMarkdown(boosted)).toContain('The client timing the frames ran reniced too');
    const plain = { ...report, relay: { ...report.relay!, clientReniced: false } };
    expect(renderLoadMarkdown(plain)).toContain("ran at the stack's priority");
    expect(renderLoadMarkdown(plain)).not.toContain('ran reniced too');
  });

  it('writes one row per concurrency level, the relay ceiling and the memory per idle connection', () => {
    const md = renderLoadMarkdown(report);
    expect(md).toContain(
      '| 100 | 200 | 4000 | 60.0 | 120 | 1.50 | 1.00 / 12.0 | 100 → 180 | 40.0 → 41.0 | 1.00 → 1.00 | 0 |',
    );
    expect(md).toContain('after a forced full GC');
    expect(md).toContain("Live heap from the first level's start to the last level's end: **40.0 → 41.0 MB**");
    expect(md).toContain('**Ceiling: 60000 tokens/s** (16 streams)');
    expect(md).toContain(
      '| 16 | 60000 | 0.50 / 8.50 | 5.00 / 8.50 | 0.00 / 0.00 | 8.00 | 1.50 | 40.0 | 6.70 | 1.00 | 100 | 22.0 | 64.0 | 0 |',
    );
    expect(md).toContain("INFERENCE_MAX_CHUNK_TOKENS=the worker's default");
    expect(md).toContain('**20.5 KB RSS per connection**');
    expect(md).toContain('target < 30.0 KB: met');
  });

  it('draws both charts without NaN', () => {
    const svg = renderLoadSvg(report);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.match(/<polyline /g)).toHaveLength(4);
    expect(svg).toContain('Relay: streams at 4000 tokens/s each');
    expect(svg).not.toMatch(/NaN|Infinity/);
  });
});

describe('splitFirstOutput', () => {
  const turn = (firstOutputMs: number, pre: number, service: number, iapi: number, calls = 1) => ({
    firstOutputMs,
    timing: {
      pre_inference_ms: pre,
      engine_service_ttft_total_ms: service,
      engine_iapi_ttft_total_ms: iapi,
      num_engine_calls: calls,
    },
  });

  it('splits the median band and the p99 tail into parts that add up to the client figure', () => {
    // 100 turns: 1..99 ms ordinary, one slow turn whose time went into the edge before Generate.
    const turns = Array.from({ length: 99 }, (_, i) => turn(60 + i * 0.1, 2, 50, 52));
    turns.push(turn(900, 700, 50, 60));
    const split = splitFirstOutput(turns)!;
    expect(split.tail).toEqual({
      turns: 1,
      firstOutputMs: 900,
      edgeBeforeGenerateMs: 700,
      workerMs: 50,
      generateHopMs: 10,
      outsideMs: 140,
    });
    expect(split.median.turns).toBe(10);
    expect(split.median.firstOutputMs).toBeCloseTo(60 + 49.5 * 0.1, 6);
    const m = split.median;
    expect(m.edgeBeforeGenerateMs + m.workerMs + m.generateHopMs + m.outsideMs).toBeCloseTo(m.firstOutputMs, 6);
  });

  it('leaves out turns with a retried Generate call, and has nothing to say without turns', () => {
    expect(splitFirstOutput([])).toBeUndefined();
    expect(splitFirstOutput([turn(500, 1, 2, 3, 2)])).toBeUndefined();
    expect(splitFirstOutput([turn(500, 1, 2, 3, 2), turn(80, 5, 50, 55)])!.tail.firstOutputMs).toBe(80);
  });
});

describe('firstOutputByKind', () => {
  it("splits opening turns from continuations, and the turns after the level's first fifth from all", () => {
    // A 10 s level: openings 1 s each, continuations 100 ms; the start burst (first 2 s) 3 s each.
    const turns = [
      ...Array.from({ length: 5 }, (_, i) => ({ turn: 1, sentAtS: i * 0.1, firstOutputMs: 3000 })),
      ...Array.from({ length: 10 }, (_, i) => ({ turn: 1, sentAtS: 2 + i * 0.5, firstOutputMs: 1000 })),
      ...Array.from({ length: 100 }, (_, i) => ({ turn: 2 + (i % 19), sentAtS: 2 + i * 0.07, firstOutputMs: 100 })),
    ];
    const kinds = firstOutputByKind(turns, 10);
    expect(kinds.opening).toMatchObject({ turns: 15, p50Ms: 1000 });
    expect(kinds.opening.p99Ms).toBeCloseTo(3000, 6);
    expect(kinds.continuation).toEqual({ turns: 100, p50Ms: 100, p99Ms: 100 });
    expect(kinds.afterStart.turns).toBe(110);
    expect(kinds.afterStart.p99Ms).toBeCloseTo(1000, 6);
  });
});

describe('load report targets and hop-by-hop table', () => {
  it('says whether the 100- and 500-loop targets are met, and prints each level’s split', () => {
    const parts = {
      turns: 3,
      firstOutputMs: 70,
      edgeBeforeGenerateMs: 4,
      workerMs: 51,
      generateHopMs: 2,
      outsideMs: 13,
    };
    const hundred = {
      ...loops(100, 400),
      edgeCpuMsPerTurn: 0.9,
      firstOutputSplit: { median: parts, tail: parts },
      firstOutputByKind: {
        opening: { turns: 20, p50Ms: 900, p99Ms: 2500 },
        continuation: { turns: 380, p50Ms: 60, p99Ms: 300 },
        afterStart: { turns: 350, p50Ms: 65, p99Ms: 700 },
      },
    };
    const md = renderLoadMarkdown(
      buildLoadReport(parseLoadOptions(['--quick'], '/r'), {
        loops: [hundred, loops(500, 1200)],
        relay: undefined,
        idle: undefined,
      }),
    );
    expect(md).toContain('| edge CPU per turn at 100 loops ≤ 1 ms | 0.90 ms | yes |');
    expect(md).toContain('| first output p99 at 500 loops ≤ 1000 ms, 0 failed turns | 1200 ms, 0 failed | **no** |');
    expect(md).toContain('| 100 | p99 tail | 3 | 70.0 | 4.00 | 51.0 | 2.00 | 13.0 |');
    expect(md).toMatch(/\| 100 \| [^|]+ \| 900 \/ 2500 \(20\) \| 60\.0 \/ 300 \(380\) \| 65\.0 \/ 700 \(350\) \|/);
  });

  it("adds up the CPU per turn of every process, and the cores it keeps busy at the level's rate", () => {
    // 200 turns/s × (1.5 + 1 + 0.5 + 2.5) ms = 1.1 cores.
    const level = {
      ...loops(100, 400),
      turnsPerS: 200,
      edgeCpuMsPerTurn: 1.5,
      cpuMsPerTurnByProcess: { safety: 1, inference: 0.5, 'load generator': 2.5 },
      eventLoopP99MsByProcess: { safety: 30, inference: 250 },
      eventLoopMaxMsByProcess: { safety: 45, inference: 2500 },
    };
    const md = renderLoadMarkdown(
      buildLoadReport(parseLoadOptions(['--quick'], '/r'), { loops: [level], relay: undefined, idle: undefined }),
    );
    expect(md).toContain('| loops | edge | inference | safety | load generator | sum | cores busy |');
    expect(md).toContain('| 100 | 1.50 | 0.50 | 1.00 | 2.50 | 5.50 | 1.10 |');
    expect(md).toContain('| loops | edge | inference | safety |');
    expect(md).toContain('| 100 | 12.0 / 40.0 | 250 / 2500 | 30.0 / 45.0 |');
  });
});
