/**
 * One hostile tenant per class, running until stopped, counting how its own requests ended. Each
 * class is the attack of issue 17, at a size this benchmark's stack can take on a shared 2-core box
 * (scaled where noted: the report says so).
 */
import {
  cpuShapes,
  keyWall,
  openStream,
  postResponse,
  queueBigFrames,
  type Outcome,
  type Target,
} from '@fastloop/service-kit/testing';

export const CLASSES = ['cpu', 'safety', 'slots', 'memory'] as const;
export type HostileClass = (typeof CLASSES)[number];

/** What one class does, in a sentence for the report. */
export const CLASS_DESCRIPTIONS: Record<HostileClass, string> = {
  cpu: 'CPU shapes: 2 connections sending, in turn, 4 MB of spaces, 8 MB of `=`, a 1 MB random word, 1 MB of CJK and 1 MB of emoji as input',
  safety:
    'safety flood: 3 connections sending 3 MB of fake keys in a carried (unread, scanned) item each, and every fourth request six 3.9 MB ones',
  slots:
    'slot flood: 20 streams held open at once (long JSON answers), re-opened as they end, against INFERENCE_MAX_CONCURRENCY=16',
  memory:
    'memory flood (scaled from 8 × 16 × 8 MB): 4 WebSockets each queueing 8 `response.create` frames of 4 MB, re-opened every 5 s',
};

/** A running hostile tenant. */
export interface Hostile {
  /** Stops sending and closes everything; resolves with how its requests ended (`status code` → count). */
  stop(): Promise<Record<string, number>>;
}

const MB = 1 << 20;

export function startHostile(kind: HostileClass, target: Target): Hostile {
  const outcomes: Record<string, number> = {};
  const count = (o: Outcome | string) => {
    const key = typeof o === 'string' ? o : `${o.status}${o.code ? ` ${o.code}` : ''}`;
    outcomes[key] = (outcomes[key] ?? 0) + 1;
  };
  let running = true;
  const loops: Promise<void>[] = [];
  const repeat = (n: number, body: (i: number, round: number) => Promise<void>) => {
    for (let i = 0; i < n; i++)
      loops.push(
        (async () => {
          for (let round = 0; running; round++) await body(i, round);
        })(),
      );
  };
  const cleanups: (() => void)[] = [];
  switch (kind) {
    case 'cpu': {
      const shapes = Object.values(cpuShapes());
      repeat(2, async (i, round) => {
        count(await postResponse(target, { input: shapes[(i + round) % shapes.length], max_output_tokens: 16 }));
      });
      break;
    }
    case 'safety': {
      const wall = keyWall(3 * MB);
      const big = keyWall(3.9 * MB, 2);
      const carried = (output: string, i: number) => ({
        type: 'mcp_call',
        id: `mcp_${i}`,
        server_label: 'docs',
        name: 'fetch',
        arguments: '{}',
        output,
      });
      repeat(3, async (_i, round) => {
        const items =
          round % 4 === 3 ? Array.from({ length: 6 }, (_, k) => carried(big, k)) : [carried(`${round}\n${wall}`, 0)];
        count(
          await postResponse(target, {
            input: [{ role: 'user', content: 'Summarize.' }, ...items],
            max_output_tokens: 16,
          }),
        );
      });
      break;
    }
    case 'slots': {
      // An answer of ~15,000 tokens: long JSON strings the simulated model writes at its decode speed
      // (15 of 4,000 characters: a strict schema's minLength is enforceable up to 4,096).
      const parts = Array.from({ length: 15 }, (_, k) => `part${k}`);
      const format = {
        type: 'json_schema',
        name: 'essay',
        strict: true,
        schema: {
          type: 'object',
          properties: Object.fromEntries(parts.map((p) => [p, { type: 'string', minLength: 4_000 }])),
          required: parts,
          additionalProperties: false,
        },
      };
      repeat(20, async (i, round) => {
        const stream = await openStream(target, { input: `Essay ${i}.${round}, please.`, text: { format } });
        count(stream.started ? 'stream held' : `stream refused ${stream.status}`);
        cleanups.push(stream.close);
        await Promise.race([stream.ended, until(() => !running)]);
        stream.close();
      });
      break;
    }
    case 'memory': {
      repeat(4, async () => {
        try {
          const socket = await queueBigFrames(target, 8, 4 * MB);
          count('8 frames sent');
          await Promise.race([new Promise((r) => setTimeout(r, 5_000)), until(() => !running)]);
          socket.close();
          for (const code of socket.errors) count(`frame refused ${code}`);
        } catch (err) {
          count(`socket failed: ${(err as Error).message.slice(0, 60)}`);
          await new Promise((r) => setTimeout(r, 500));
        }
      });
      break;
    }
  }
  return {
    async stop() {
      running = false;
      for (const close of cleanups) close();
      await Promise.all(loops);
      return outcomes;
    },
  };
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 100));
}
