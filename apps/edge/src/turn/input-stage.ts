import { ApiErrors, describeId, type InputItem, type ResponseCreateRequest } from '@fastloop/protocol';
import { AppendLog, type LogView } from './append-log';
import type { CallTarget } from './conversation-state';
import { narrowItems, type NarrowContext, type NarrowedItem } from './narrow-item';
import { SealError, type SealPurpose } from './reasoning-seal';
import { sameHeaderSource } from './same-header-source';
import type { TurnDeps, TurnRequest } from './turn-deps';

/**
 * A turn's input, narrowed once: the one list the rendering (render stage) and the safety scan
 * (verdict) are both built from, so sealed reasoning is opened once per turn.
 */
export interface TurnInput {
  /** Every item of the conversation, this turn's included. */
  readonly items: LogView<InputItem>;
  /** Index in `items` where this turn's input starts. */
  readonly inputStart: number;
  /** This turn's items, item references resolved. */
  readonly newItems: readonly InputItem[];
  /** `newItems` narrowed (parallel to it). */
  readonly narrowed: readonly NarrowedItem[];
  /** call_id → tool of every call so far (the previous state's map, extended in place as calls render). */
  readonly calls: Map<string, CallTarget>;
  /** How this tenant's items narrow (its sealed reasoning opens under the deployment's keys). */
  readonly ctx: NarrowContext;
  /** The request's header reads as the previous turn's (compared once here; see render-header.ts `sameHeaderSource`). */
  readonly sameHeader: boolean;
}

/**
 * The input stage: normalises `input`, resolves `item_reference` items, and narrows the new items
 * (opening sealed reasoning). With a previous state it touches only the new items. Throws ApiError
 * for anything the client must fix.
 */
export async function readInput(deps: TurnDeps, req: TurnRequest): Promise<TurnInput> {
  const { previous } = req;
  const input = normalizeInput(req.body.input);
  // Only a turn that has references pays for the (possibly remote) lookup, and its microtask.
  const newItems = input.some((i) => i.type === 'item_reference') ? await resolveReferences(deps, req, input) : input;
  const inputStart = previous ? previous.items.length : 0;
  const calls = previous ? (previous.calls as Map<string, CallTarget>) : new Map<string, CallTarget>();
  const ctx = narrowContext(deps, req.principal.tenant);
  return {
    items: previous ? previous.items.append(newItems) : AppendLog.from(newItems),
    inputStart,
    newItems,
    narrowed: narrowItems(newItems, inputStart, ctx),
    calls,
    ctx,
    sameHeader: previous?.headerSource !== undefined && sameHeaderSource(previous.headerSource, req.body),
  };
}

/**
 * How this tenant's items narrow: sealed reasoning opens under the deployment's keys, and a blob
 * that does not open is the client's error (400 `invalid_encrypted_content`).
 */
export function narrowContext(deps: Pick<TurnDeps, 'reasoningSeal'>, tenant: string): NarrowContext {
  const seal = deps.reasoningSeal;
  if (!seal) return {};
  const opener =
    (purpose?: SealPurpose) =>
    (encrypted: string, param: string): string => {
      try {
        return seal.open(encrypted, tenant, purpose);
      } catch (err) {
        if (!(err instanceof SealError)) throw err;
        throw ApiErrors.invalidRequest(
          `The encrypted content ${err.message} and could not be verified.`,
          param,
          'invalid_encrypted_content',
        );
      }
    };
  return { openReasoning: opener(), openCompaction: opener('compaction') };
}

/** `input` as items: a string is one user message. */
function normalizeInput(input: ResponseCreateRequest['input']): InputItem[] {
  if (input === undefined) return [];
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return input;
}

/**
 * Replaces `item_reference` items with the items they name: from this connection's conversation
 * first, then (HTTP, or an id from another chain) from the caller's tenant's stored items.
 */
async function resolveReferences(deps: TurnDeps, req: TurnRequest, items: InputItem[]): Promise<InputItem[]> {
  const local = new Map<string, InputItem>();
  if (req.previous) for (const item of req.previous.items) if (item.id !== undefined) local.set(item.id, item);
  const resolved: InputItem[] = [];
  for (const [index, item] of items.entries()) {
    if (item.type !== 'item_reference' || item.id === undefined) {
      resolved.push(item);
      continue;
    }
    const found = local.get(item.id) ?? (await deps.items?.find(item.id, req.principal.tenant));
    if (!found) throw ApiErrors.invalidRequest(`Item with ${describeId(item.id)} not found.`, `input[${index}].id`);
    resolved.push(found);
  }
  return resolved;
}
