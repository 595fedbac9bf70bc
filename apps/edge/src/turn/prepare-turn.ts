import {
  resolveProfile,
  type ConversationEntry,
  type FreeformFormat,
  type JsonSchema,
  type ModelProfile,
  type RenderHeader,
  type ToolSpec,
} from '@fastloop/model-profiles';
import { safetyV1 } from '@fastloop/proto';
import {
  ApiError,
  ApiErrors,
  describeId,
  isKnownTool,
  type CustomTool,
  type InputItem,
  type NamespaceMember,
  type ResponseCreateRequest,
  type Tool,
} from '@fastloop/protocol';
import { renderWithinLimits } from './render-within-limits';
import { DomainError } from '@fastloop/service-kit';
import { AppendLog, type LogView } from './append-log';
import type { CallTarget, ConversationState, RouteDecision } from './conversation-state';
import { itemsToEntries, itemsToScans, LOCAL_SHELL_TOOL, type ConversionContext } from './item-conversion';
import { SealError } from './reasoning-seal';
import { renderConversation, type RenderedConversation } from './render-conversation';
import type { TurnDeps, TurnRequest } from './turn-deps';
import { RouteCache } from './route-cache';
import { affinityKeyOf, routeRequestOf } from './route-hints';
import type { StageTimer } from '../edge-metrics';
import { headerSafetyItems } from '../safety/header-items';
import { HeaderVerdicts } from '../safety/header-verdicts';
import { blockedError, noticed, type NoticedFinding } from '../safety/safety-findings';
import { redactionMasks } from '../safety/redact-entries';

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
  /**
   * This turn with the redact findings' spans masked in what the model reads (the client's items
   * stay as sent), or undefined when no finding asks to redact this turn's items.
   */
  readonly redact: (findings: readonly safetyV1.Finding[]) => PreparedTurn | undefined;
  /** This turn's entries carry redaction masks. */
  readonly redacted: boolean;
  /**
   * Set when the prompt does not fit the model's context window, on a streaming transport: the
   * stream then ends in `response.failed` with `context_length_exceeded` (what agents such as Codex
   * act on, e.g. by compacting), after the safety verdict, with nothing sent to a worker.
   */
  readonly contextOverflow?: ApiError;
}

/**
 * Validates, classifies, routes and renders a turn. With a previous state it touches only the new
 * items (and the previous response's output, which the model wrote and safety has not seen yet).
 * Throws ApiError for anything the client must fix; nothing has been sent to the client yet.
 */
export async function prepareTurn(deps: TurnDeps, req: TurnRequest, timer: StageTimer): Promise<PreparedTurn> {
  const { body, previous } = req;
  const input = normalizeInput(body.input);
  // Only a turn that has references pays for the (possibly remote) lookup, and its microtask.
  const newItems = input.some((i) => i.type === 'item_reference') ? await resolveReferences(deps, req, input) : input;
  const items = previous ? previous.items.append(newItems) : AppendLog.from(newItems);
  const inputStart = previous ? previous.items.length : 0;
  const calls = previous ? (previous.calls as Map<string, CallTarget>) : new Map<string, CallTarget>();
  const ctx = conversionContext(deps, req.principal.tenant);
  const newEntries = itemsToEntries(newItems, calls, inputStart, ctx);
  timer.mark('validate', req.validateMs);
  timer.record('load', req.loadMs);

  const header = toHeader(body);
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
  const entries = previous ? previous.entries.append(newEntries) : AppendLog.from(newEntries);
  // Another model's profile (tokenizer, chat format) shares nothing: render the whole conversation.
  // A template that is not append-stable is rendered whole each turn (renderConversation does).
  const extend =
    previous && previous.route.profile === route.profile && profile.appendStable !== false
      ? previous.rendered
      : undefined;
  const render = (
    all: LogView<ConversationEntry>,
    added: readonly ConversationEntry[],
    from: RenderedConversation | undefined,
  ) =>
    renderWithinLimits(deps, {
      profile,
      header,
      body,
      entries: all,
      newEntries: added,
      extend: from,
      contextWindow: route.contextWindow,
    });
  let rendered: RenderedConversation;
  let contextOverflow: ApiError | undefined;
  try {
    rendered = render(entries, newEntries, extend);
  } catch (err) {
    // A plain JSON request gets the error as its HTTP answer; a stream ends in response.failed (runTurn).
    if (!(err instanceof ApiError && err.code === 'context_length_exceeded') || req.transport === 'http') throw err;
    contextOverflow = err;
    rendered = extend ?? renderConversation(profile, header, AppendLog.from<ConversationEntry>([]), deps.renderCache);
  }
  timer.mark('render');

  const prepared: PreparedTurn = {
    items,
    inputStart,
    entries,
    calls,
    rendered,
    profile,
    route,
    safety,
    contextOverflow,
    redacted: false,
    redact: (findings) => {
      if (contextOverflow) return undefined; // the turn fails after the verdict; nothing is rendered for a worker
      if (!previous?.unmasked) {
        const masked = maskedEntries(newItems, calls, inputStart, findings, ctx);
        if (!masked) return undefined;
        const all = previous ? previous.entries.append(masked) : AppendLog.from(masked);
        return { ...prepared, entries: all, rendered: render(all, masked, extend), redacted: true };
      }
      // A reloaded redacted conversation: mask every item and render it all again.
      const masked = maskedEntries(items.slice(), new Map(), 0, findings, ctx);
      if (!masked) return undefined;
      const all = AppendLog.from(masked);
      return { ...prepared, entries: all, rendered: render(all, masked, undefined), redacted: true };
    },
  };
  return prepared;
}

/** This turn's entries with redactions applied, or undefined when none applies to them. */
function maskedEntries(
  newItems: readonly InputItem[],
  calls: Map<string, CallTarget>,
  inputStart: number,
  findings: readonly safetyV1.Finding[],
  ctx: ConversionContext,
): ConversationEntry[] | undefined {
  const masks = redactionMasks(findings, inputStart, inputStart + newItems.length);
  if (masks.size === 0) return undefined;
  return itemsToEntries(newItems, calls, inputStart, { ...ctx, masks });
}

/**
 * How this tenant's items convert: sealed reasoning opens under the deployment's keys, and a blob
 * that does not open is the client's error (400 `invalid_encrypted_content`).
 */
export function conversionContext(deps: Pick<TurnDeps, 'reasoningSeal'>, tenant: string): ConversionContext {
  const seal = deps.reasoningSeal;
  if (!seal) return {};
  return {
    openReasoning: (encrypted, param) => {
      try {
        return seal.open(encrypted, tenant);
      } catch (err) {
        if (!(err instanceof SealError)) throw err;
        throw ApiErrors.invalidRequest(
          `The encrypted content ${err.message} and could not be verified.`,
          param,
          'invalid_encrypted_content',
        );
      }
    },
  };
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

async function routeTurn(deps: TurnDeps, req: TurnRequest): Promise<RouteDecision> {
  const prev = req.previous?.route;
  if (prev && prev.requestedModel === req.body.model) {
    // Reuse the cached decision: no router call on a cached turn while the router's reuse_ms lasts
    // (forever from a router without it). A dead worker is detected by the Generate call, which
    // then routes again (see streamTokens); an expired one asks the router, which may move the
    // conversation (its worker drains, or is over the load bound).
    if (prev.reuseUntil === undefined || Date.now() < prev.reuseUntil) return prev;
    return routeFresh(deps, req, req.body.model);
  }
  const key = RouteCache.key(req.body.model, req.principal.tenant, affinityKeyOf(req));
  const cached = deps.routeCache?.get(key);
  if (cached) return cached;
  const decision = await routeFresh(deps, req, req.body.model);
  // A router that bounds reuse (reuse_ms) places every new conversation itself: a key such as
  // prompt_cache_key names a group of conversations, and reusing its decision would bypass the
  // router's load bound for the whole group.
  if (decision.reuseUntil === undefined) deps.routeCache?.set(key, decision);
  return decision;
}

/**
 * Asks the router for a model and worker (never one of `excludeWorkerIds`); maps its errors to API
 * errors.
 */
export async function routeFresh(
  deps: TurnDeps,
  req: TurnRequest,
  model: string,
  excludeWorkerIds: readonly string[] = [],
): Promise<RouteDecision> {
  try {
    const r = await deps.backends.route(routeRequestOf(req, model, excludeWorkerIds), req.signal);
    return {
      requestedModel: model,
      model: r.model,
      profile: r.profile,
      workerAddress: r.workerAddress,
      workerId: r.workerId,
      contextWindow: r.contextWindow,
      maxOutputTokens: r.maxOutputTokens,
      engineModel: r.engineModel,
      reuseUntil: r.reuseMs === undefined ? undefined : Date.now() + r.reuseMs,
    };
  } catch (err) {
    if (err instanceof DomainError && err.code === 'model_not_found') throw ApiErrors.modelNotFound(model);
    throw backendError('router', err);
  }
}

/** Safety's carried state after this turn's items, and what it asked to flag or redact. */
export interface SafetyResult {
  state: Buffer;
  itemsSeen: number;
  noticed: NoticedFinding[];
}

/**
 * Classifies the items safety has not seen, carrying its state, and the request header
 * (instructions and tool definitions, which the model reads too; once per distinct header);
 * blocks with an API error.
 */
async function classify(deps: TurnDeps, req: TurnRequest, items: LogView<InputItem>): Promise<SafetyResult> {
  const header = classifyHeader(deps, req);
  header.catch(() => undefined); // awaited below, after the items' verdict
  const prev = req.previous;
  let from = prev ? prev.safetyItems : 0;
  let state = prev ? prev.safetyState : Buffer.alloc(0);
  const ctx = conversionContext(deps, req.principal.tenant);
  const request = (fromItem: number) => ({
    state,
    items: itemsToScans(items.slice(fromItem), fromItem, ctx),
    tenant: req.principal.tenant,
    model: req.body.model,
  });
  let res: safetyV1.ClassifyResponse;
  try {
    res = await deps.backends.classify(request(from), req.signal);
  } catch (err) {
    if (!(err instanceof DomainError && err.code === 'invalid_safety_state')) throw backendError('safety', err);
    // The state was minted under another secret, rule set or policy: classify the whole conversation again.
    from = 0;
    state = Buffer.alloc(0);
    res = await deps.backends.classify(request(0), req.signal).catch((e) => {
      throw backendError('safety', e);
    });
  }
  if (res.verdict === safetyV1.Verdict.VERDICT_BLOCK) throw blockedError(res, (i) => `input item ${i} was`);
  const headerNoticed = await header;
  return {
    state: ownedCopy(res.state),
    itemsSeen: res.itemsSeen,
    noticed: [...headerNoticed, ...noticed(res, 'input')],
  };
}

/**
 * The bytes in a buffer of their own: decoded `bytes` are a view of the whole gRPC receive buffer
 * (8 KB or more), and `Buffer.from` would put small copies in a shared 8 KB pool slab; either one
 * is kept alive for as long as the connection cache keeps the conversation.
 */
export function ownedCopy(bytes: Uint8Array): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  copy.set(bytes);
  return copy;
}

/** The header's verdict (cached per distinct header); throws when it blocks. */
async function classifyHeader(deps: TurnDeps, req: TurnRequest): Promise<NoticedFinding[]> {
  const items = headerSafetyItems(req.body);
  if (items.length === 0) return [];
  const { tenant } = req.principal;
  const key = HeaderVerdicts.key(tenant, req.body.model, items);
  const res = await deps.headerVerdicts
    .get(key, () => deps.backends.classify({ state: Buffer.alloc(0), items, tenant, model: req.body.model }))
    .catch((e: unknown) => {
      throw backendError('safety', e);
    });
  if (res.verdict === safetyV1.Verdict.VERDICT_BLOCK) {
    throw blockedError(res, (i) =>
      items[i]?.itemType === 'instructions'
        ? 'the instructions were'
        : `tool definition ${i - (items[0].itemType === 'instructions' ? 1 : 0)} was`,
    );
  }
  return noticed(res, 'header');
}

/** What a header renders from: a request body, or the Response object a stored conversation kept. */
export interface HeaderSource {
  tools?: readonly Tool[];
  tool_choice?: ResponseCreateRequest['tool_choice'];
  instructions?: string | null;
  reasoning?: { effort?: string | null } | null;
  text?: { format?: { type?: string; name?: string; schema?: unknown } } | null;
}

/**
 * The chat-format header of a request: instructions, the tools the model can call (functions,
 * namespaces, custom tools, local_shell) and the effort. Hosted tools are carried, not offered.
 */
export function toHeader(body: HeaderSource): RenderHeader {
  // tool_choice "none": the model is not shown the tools, so it cannot call them.
  const offered = body.tool_choice === 'none' ? [] : (body.tools ?? []);
  const tools = offered.flatMap(toolSpecs);
  const effort = body.reasoning?.effort;
  const header: RenderHeader = {
    instructions: body.instructions ?? undefined,
    tools,
    reasoningEffort: effort === 'low' || effort === 'medium' || effort === 'high' ? effort : undefined,
  };
  // Formats that carry them (chat-template profiles) let the engine enforce these with a grammar.
  const choice = body.tool_choice as unknown;
  if (tools.length > 0 && choice === 'required') header.toolChoice = 'required';
  else if (tools.length > 0 && isNamedFunction(choice)) header.toolChoice = { name: choice.name };
  const format = body.text?.format;
  if (
    format?.type === 'json_schema' &&
    typeof format.name === 'string' &&
    typeof format.schema === 'object' &&
    format.schema !== null
  ) {
    header.responseFormat = { name: format.name, schema: format.schema as JsonSchema };
  }
  return header;
}

function isNamedFunction(choice: unknown): choice is { type: 'function'; name: string } {
  return (
    typeof choice === 'object' &&
    choice !== null &&
    (choice as { type?: unknown }).type === 'function' &&
    typeof (choice as { name?: unknown }).name === 'string'
  );
}

/** The tool specs of one wire tool: none for hosted tools the model cannot call. */
function toolSpecs(tool: Tool | NamespaceMember): ToolSpec[] {
  if (!isKnownTool(tool)) return [];
  switch (tool.type) {
    case 'function':
      return [withoutUndefined({ name: tool.name, description: tool.description, parameters: tool.parameters })];
    case 'custom':
      return [withoutUndefined({ name: tool.name, description: tool.description, freeform: freeformOf(tool.format) })];
    case 'local_shell':
      return [LOCAL_SHELL_SPEC];
    case 'namespace':
      return tool.tools
        .flatMap(toolSpecs)
        .map((spec) => withoutUndefined({ ...spec, namespace: tool.name, namespaceDescription: tool.description }));
    default:
      return unreachableTool(tool);
  }
}

function freeformOf(format: CustomTool['format']): FreeformFormat {
  if (
    format?.type === 'grammar' &&
    'definition' in format &&
    typeof format.definition === 'string' &&
    typeof format.syntax === 'string'
  ) {
    return { type: 'grammar', syntax: format.syntax, definition: format.definition };
  }
  return { type: 'text' };
}

function unreachableTool(tool: never): never {
  throw new Error(`Unhandled tool: ${JSON.stringify(tool)}`);
}

/** The `local_shell` tool as the model sees it: the fields of a `local_shell_call` action. */
const LOCAL_SHELL_SPEC: ToolSpec = {
  name: LOCAL_SHELL_TOOL,
  description: "Runs a command on the user's machine and returns its output.",
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'array', items: { type: 'string' }, description: 'The command and its arguments (argv).' },
      working_directory: { type: 'string' },
      timeout_ms: { type: 'number' },
      env: { type: 'object', properties: {} },
    },
    required: ['command'],
  },
};

/** Drops undefined-valued keys: the header key hashes the specs' JSON, and equal tools must compare equal. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * A backend failure as the client sees it: a 503 whose code names the dependency
 * (`safety_unavailable`, `router_unavailable`, `inference_unavailable`) when retrying may help,
 * else a plain 500. Never the peer's message: it carries addresses and transport errors
 * (`connect ECONNREFUSED 10.0.3.7:50051`). The original error stays as `cause`, for the logs.
 */
export function backendError(service: 'safety' | 'router' | 'inference', err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err instanceof DomainError ? err : undefined;
  const apiErr = e?.retryable ? ApiErrors.dependencyUnavailable(service) : ApiErrors.server();
  return new ApiError({
    status: apiErr.status,
    type: apiErr.type,
    code: apiErr.code,
    message: apiErr.message,
    cause: err,
  });
}
