import { resolveProfile, type ConversationEntry, type JsonSchema, type ModelProfile, type RenderHeader, type ToolSpec } from '@fastloop/model-profiles';
import { safetyV1 } from '@fastloop/proto';
import { ApiErrors, type InputItem, type ResponseCreateRequest } from '@fastloop/protocol';
import { DomainError } from '@fastloop/service-kit';
import { AppendLog, type LogView } from './append-log';
import type { CallTarget, ConversationState, RouteDecision } from './conversation-state';
import { itemsToEntries, contentText } from './items-to-entries';
import { extendConversation, renderConversation, type RenderedConversation } from './render-conversation';
import type { TurnDeps, TurnRequest } from './turn-deps';
import { RouteCache } from './route-cache';
import type { StageTimer } from '../edge-metrics';

/** A turn with everything done but inference: what the stream step and the cache need. */
export interface PreparedTurn {
  readonly items: LogView<InputItem>;
  /** Index in `items` where this turn's input starts. */
  readonly inputStart: number;
  readonly entries: LogView<ConversationEntry>;
  readonly calls: Map<string, CallTarget>;
  readonly rendered: RenderedConversation;
  readonly profile: ModelProfile;
  readonly route: RouteDecision;
  /**
   * The safety verdict: starts the classifier call on first use (at once, in prepareTurn, unless
   * safety overlap is on) and rejects with an ApiError when the input is blocked. The caller awaits
   * it before sending anything to the client (and, unless safety overlap is on, before anything
   * reaches a worker).
   */
  readonly safety: () => Promise<SafetyResult>;
}

/**
 * Validates, classifies, routes and renders a turn. With a previous state it touches only the new
 * items (and the previous response's output, which the model wrote and safety has not seen yet).
 * Throws ApiError for anything the client must fix; nothing has been sent to the client yet.
 */
export async function prepareTurn(deps: TurnDeps, req: TurnRequest, timer: StageTimer): Promise<PreparedTurn> {
  const { body, previous } = req;
  const newItems = resolveReferences(normalizeInput(body.input), previous);
  const items = previous ? previous.items.append(newItems) : AppendLog.from(newItems);
  const inputStart = previous ? previous.items.length : 0;
  const calls = previous ? (previous.calls as Map<string, CallTarget>) : new Map<string, CallTarget>();
  const newEntries = itemsToEntries(newItems, calls, inputStart);
  timer.mark('validate', req.validateMs);
  timer.record('load', req.loadMs);

  let verdict: Promise<SafetyResult> | undefined;
  const safety = () => {
    if (!verdict) {
      verdict = classify(deps, req, items);
      verdict.catch(() => undefined); // awaited by the caller; no unhandled rejection if routing fails first
    }
    return verdict;
  };
  // Without overlap the verdict gates Generate, so its round trip runs beside routing and rendering.
  // With overlap it is started after Generate (runTurn): its encoding stays off the critical path.
  if (!deps.safetyOverlap) void safety();
  const route = await routeTurn(deps, req);
  timer.mark('route');

  const profile = await resolveProfile(route.profile);
  const header = toHeader(body);
  const entries = previous ? previous.entries.append(newEntries) : AppendLog.from(newEntries);
  // Another model's profile (tokenizer, chat format) shares nothing: render the whole conversation.
  // A template that is not append-stable is rendered whole each turn (renderConversation does).
  const rendered = previous && previous.route.profile === route.profile && profile.appendStable !== false
    ? extendConversation(profile, previous.rendered, header, newEntries)
    : renderConversation(profile, header, entries, deps.renderCache);
  const promptLength = rendered.tokens.length + profile.renderGenerationPrompt().length;
  if (promptLength >= route.contextWindow) {
    throw ApiErrors.contextLengthExceeded(
      `Your input exceeds the context window of this model (${promptLength} tokens, limit ${route.contextWindow}). Please adjust your input and try again.`,
    );
  }
  timer.mark('render');

  return { items, inputStart, entries, calls, rendered, profile, route, safety };
}

/** `input` as items: a string is one user message. */
function normalizeInput(input: ResponseCreateRequest['input']): InputItem[] {
  if (input === undefined) return [];
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input } as InputItem];
  return input as InputItem[];
}

/** Replaces `item_reference` items with the referenced item from this conversation. */
function resolveReferences(items: InputItem[], previous: ConversationState | undefined): InputItem[] {
  if (!items.some((i) => (i as { type?: string }).type === 'item_reference')) return items;
  return items.map((item, index) => {
    const ref = item as { type?: string; id?: string };
    if (ref.type !== 'item_reference') return item;
    const found = previous && [...previous.items].find((i) => (i as { id?: string }).id === ref.id);
    if (!found) throw ApiErrors.invalidRequest(`Item with id '${ref.id}' not found.`, `input[${index}].id`);
    return found;
  });
}

async function routeTurn(deps: TurnDeps, req: TurnRequest): Promise<RouteDecision> {
  const prev = req.previous?.route;
  // Reuse the cached decision: no router call on a cached turn. A dead worker is detected by the
  // Generate call, which then routes again (see streamTurn).
  if (prev && prev.requestedModel === req.body.model) return prev;
  const key = RouteCache.key(req.body.model, req.principal.tenant, affinityKey(req));
  const cached = deps.routeCache?.get(key);
  if (cached) return cached;
  const decision = await routeFresh(deps, req, req.body.model);
  deps.routeCache?.set(key, decision);
  return decision;
}

function affinityKey(req: TurnRequest): string {
  return req.body.prompt_cache_key ?? req.body.previous_response_id ?? '';
}

/** Asks the router for a model and worker; maps its errors to API errors. */
export async function routeFresh(deps: TurnDeps, req: TurnRequest, model: string): Promise<RouteDecision> {
  try {
    const r = await deps.backends.route(
      { model, tenant: req.principal.tenant, affinityKey: affinityKey(req) },
      req.signal,
    );
    return {
      requestedModel: model,
      model: r.model,
      profile: r.profile,
      workerAddress: r.workerAddress,
      workerId: r.workerId,
      contextWindow: r.contextWindow,
      maxOutputTokens: r.maxOutputTokens,
      engineModel: r.engineModel,
    };
  } catch (err) {
    if (err instanceof DomainError && err.code === 'model_not_found') throw ApiErrors.modelNotFound(model);
    throw backendError('router', err);
  }
}

/** Safety's carried state after this turn's items. */
export interface SafetyResult {
  state: Buffer;
  itemsSeen: number;
}

/** Classifies the items safety has not seen, carrying its state; blocks with an API error. */
async function classify(deps: TurnDeps, req: TurnRequest, items: LogView<InputItem>): Promise<SafetyResult> {
  const prev = req.previous;
  let from = prev ? prev.safetyItems : 0;
  let state = prev ? prev.safetyState : Buffer.alloc(0);
  let res: safetyV1.ClassifyResponse;
  try {
    res = await deps.backends.classify({ state, items: toSafetyItems(items.slice(from)), tenant: req.principal.tenant }, req.signal);
  } catch (err) {
    if (!(err instanceof DomainError && err.code === 'invalid_safety_state')) throw backendError('safety', err);
    // The state was minted under another secret or rule set: classify the whole conversation again.
    from = 0;
    state = Buffer.alloc(0);
    res = await deps.backends.classify({ state, items: toSafetyItems(items.slice()), tenant: req.principal.tenant }, req.signal).catch((e) => {
      throw backendError('safety', e);
    });
  }
  if (res.verdict === safetyV1.Verdict.VERDICT_BLOCK) {
    const f = res.findings[0];
    throw ApiErrors.contentBlocked(
      f ? `Invalid prompt: input item ${f.itemIndex} was blocked (${f.ruleId}): ${f.message}` : undefined,
    );
  }
  return { state: res.state, itemsSeen: res.itemsSeen };
}

function toSafetyItems(items: readonly InputItem[]): safetyV1.SafetyItem[] {
  return items.map((item) => {
    const it = item as Record<string, unknown> & { type?: string };
    const type = it.type ?? 'message';
    let text = '';
    if (type === 'message') text = contentText(it.content);
    else if (type === 'function_call') text = String(it.arguments ?? '');
    else if (type === 'function_call_output') text = contentText(it.output);
    else if (type === 'reasoning') text = contentText(it.summary) + contentText(it.content);
    return { itemType: type, role: typeof it.role === 'string' ? it.role : '', text };
  });
}

/** The chat-format header of a request: instructions, function tools (incl. namespaces), effort. */
export function toHeader(body: ResponseCreateRequest): RenderHeader {
  const tools: ToolSpec[] = [];
  // tool_choice "none": the model is not shown the tools, so it cannot call them.
  const offered = body.tool_choice === 'none' ? [] : ((body.tools ?? []) as Record<string, unknown>[]);
  for (const tool of offered) {
    if (tool.type === 'function') tools.push(functionSpec(tool));
    if (tool.type === 'namespace') {
      for (const inner of (tool.tools ?? []) as Record<string, unknown>[]) {
        if (inner.type === undefined || inner.type === 'function') {
          tools.push({ ...functionSpec(inner), namespace: tool.name as string, namespaceDescription: tool.description as string | undefined });
        }
      }
    }
  }
  const effort = (body.reasoning as { effort?: string } | undefined)?.effort;
  const header: RenderHeader = {
    instructions: body.instructions ?? undefined,
    tools,
    reasoningEffort: effort === 'low' || effort === 'medium' || effort === 'high' ? effort : undefined,
  };
  // Formats that carry them (chat-template profiles) let the engine enforce these with a grammar.
  const choice = body.tool_choice as unknown;
  if (tools.length > 0 && choice === 'required') header.toolChoice = 'required';
  else if (tools.length > 0 && isNamedFunction(choice)) header.toolChoice = { name: choice.name };
  const format = (body.text as { format?: { type?: string; name?: string; schema?: unknown } } | undefined)?.format;
  if (format?.type === 'json_schema' && typeof format.name === 'string' && typeof format.schema === 'object' && format.schema !== null) {
    header.responseFormat = { name: format.name, schema: format.schema as JsonSchema };
  }
  return header;
}

function isNamedFunction(choice: unknown): choice is { type: 'function'; name: string } {
  return typeof choice === 'object' && choice !== null && (choice as { type?: unknown }).type === 'function' && typeof (choice as { name?: unknown }).name === 'string';
}

function functionSpec(tool: Record<string, unknown>): ToolSpec {
  const spec: ToolSpec = { name: tool.name as string };
  if (typeof tool.description === 'string') spec.description = tool.description;
  if (tool.parameters && typeof tool.parameters === 'object') spec.parameters = tool.parameters as ToolSpec['parameters'];
  return spec;
}

/** A backend failure as the client sees it: 503 when retryable, else 500. */
export function backendError(service: string, err: unknown) {
  if (err instanceof Error && err.name === 'ApiError') return err;
  const e = err instanceof DomainError ? err : undefined;
  const message = `The ${service} service failed: ${e?.message ?? String(err)}`;
  return e?.retryable ? ApiErrors.unavailable(message) : ApiErrors.server(message);
}
