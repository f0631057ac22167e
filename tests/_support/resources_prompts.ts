/**
 * Resources, resource templates, prompts, completions, logging and resource subscriptions for a
 * test server (the conformance fixture), as an extension of a ServerDefinition
 * (src/server/definition.ts): served by the same factory, guards, era routing and sessions as the
 * workspace server, which itself serves only empty resource and prompt lists
 * (src/server/empty_lists.ts). Lists are precomputed and frozen, paged like tools/list; look-ups
 * are maps and URI templates are parsed once.
 */
import {
  type CacheHint,
  type CompleteResult,
  type GetPromptResult,
  type InputRequiredResult,
  type McpServer,
  type PromptArgument,
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  ResourceNotFoundError,
  type ServerCapabilities,
  UriTemplate,
  type Variables,
} from "@modelcontextprotocol/server";
import {
  type CallContext,
  deepFreeze,
  defined,
  type ServerDefinition,
  type ServerExtension,
  type ServingUnit,
} from "../../src/server/definition.ts";
import { canonicalUri, invalidUriError } from "../../src/server/empty_lists.ts";
import { page } from "../../src/server/paging.ts";

/** Completion values for one argument or template variable. */
export type Completer = (
  value: string,
  context: { arguments?: Record<string, string> } | undefined,
) => string[] | Promise<string[]>;

type ReadOutcome = ReadResourceResult | InputRequiredResult;

/** One direct resource. */
export interface ResourceSpec {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  /** Cache hint for its resources/read results on the modern era. */
  cacheHint?: CacheHint;
  read: (uri: URL, call: CallContext) => ReadOutcome | Promise<ReadOutcome>;
}

/** One resource template (RFC 6570 level 1-4 as the SDK's UriTemplate parses it). */
export interface ResourceTemplateSpec {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  cacheHint?: CacheHint;
  /** Completion of template variables, by variable name. */
  complete?: Record<string, Completer>;
  read: (uri: URL, variables: Variables, call: CallContext) => ReadOutcome | Promise<ReadOutcome>;
}

/** One prompt. */
export interface PromptSpec {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  /** Completion of arguments, by argument name. */
  complete?: Record<string, Completer>;
  get: (
    args: Record<string, string>,
    call: CallContext,
  ) => GetPromptResult | InputRequiredResult | Promise<GetPromptResult | InputRequiredResult>;
}

/** What a test server serves besides tools. Omitted families are not declared as capabilities. */
export interface ResourcesAndPrompts {
  /** Declares `resources` (an empty list still declares it). */
  resources?: readonly ResourceSpec[];
  resourceTemplates?: readonly ResourceTemplateSpec[];
  /** Declares `prompts` (an empty list still declares it). */
  prompts?: readonly PromptSpec[];
  /** Declares `completions`: answers from the prompts' and templates' `complete` callbacks. */
  completions?: boolean;
  /** Declares `logging`: logging/setLevel (initialization era) and `ctx.mcpReq.log`. */
  logging?: boolean;
  /** Declares `resources.subscribe`: resources/subscribe and /unsubscribe of known URIs. */
  resourceSubscriptions?: boolean;
}

/** A definition with resources, templates and prompts (the fields of both). */
export type FullDefinition = Omit<ServerDefinition, "extension"> & ResourcesAndPrompts;

interface CompiledTemplate {
  spec: ResourceTemplateSpec;
  template: UriTemplate;
}

type WireList = readonly Readonly<Record<string, unknown>>[];

const MAX_COMPLETIONS = 100;

function unique(kind: string, names: string[]): void {
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) throw new Error(`duplicate ${kind} ${JSON.stringify(n)}`);
    seen.add(n);
  }
}

async function completion(
  completer: Completer | undefined,
  value: string,
  context: { arguments?: Record<string, string> } | undefined,
): Promise<CompleteResult> {
  if (!completer) return { completion: { values: [], total: 0, hasMore: false } };
  const values = await completer(value, context);
  return {
    completion: {
      values: values.slice(0, MAX_COMPLETIONS),
      total: values.length,
      hasMore: values.length > MAX_COMPLETIONS,
    },
  };
}

/** Adds a resource's own cache hint to a modern resources/read result that has none. */
function withCacheHint(
  result: ReadResourceResult,
  hint: CacheHint | undefined,
  modern: boolean,
): ReadResourceResult {
  if (!modern || hint === undefined || "resultType" in result) return result;
  const r = result as Record<string, unknown>;
  return {
    ...result,
    ...(r.ttlMs === undefined && hint.ttlMs !== undefined ? { ttlMs: hint.ttlMs } : {}),
    ...(r.cacheScope === undefined && hint.cacheScope !== undefined
      ? { cacheScope: hint.cacheScope }
      : {}),
  } as ReadResourceResult;
}

/** The extension serving resources, templates and prompts, compiled once. */
class ResourcesAndPromptsExtension implements ServerExtension {
  readonly capabilities: ServerCapabilities;
  readonly cachedLists: readonly string[];
  readonly #extras: ResourcesAndPrompts;
  readonly #resourceByUri = new Map<string, ResourceSpec>();
  readonly #templates: readonly CompiledTemplate[];
  readonly #templateByPattern: ReadonlyMap<string, CompiledTemplate>;
  readonly #promptByName: ReadonlyMap<string, PromptSpec>;
  readonly #resourceList: WireList | undefined;
  readonly #templateList: WireList | undefined;
  readonly #promptList: WireList | undefined;
  /** URIs each initialization-era instance subscribed to (resources/subscribe). */
  readonly #subscriptions = new WeakMap<McpServer, Set<string>>();

  constructor(extras: ResourcesAndPrompts, listChanged: ServerDefinition["listChanged"]) {
    this.#extras = extras;
    unique("prompt", (extras.prompts ?? []).map((p) => p.name));
    unique("resource template", (extras.resourceTemplates ?? []).map((t) => t.name));
    for (const r of extras.resources ?? []) {
      const key = canonicalUri(r.uri);
      if (key === null) throw new Error(`resource URI ${JSON.stringify(r.uri)} is not a URI`);
      if (this.#resourceByUri.has(key)) {
        throw new Error(`duplicate resource ${JSON.stringify(r.uri)}`);
      }
      this.#resourceByUri.set(key, r);
    }
    this.#templates = Object.freeze((extras.resourceTemplates ?? []).map((spec) => ({
      spec,
      template: new UriTemplate(spec.uriTemplate),
    })));
    this.#templateByPattern = new Map(this.#templates.map((t) => [t.spec.uriTemplate, t]));
    this.#promptByName = new Map((extras.prompts ?? []).map((p) => [p.name, p]));
    const hasResources = extras.resources !== undefined ||
      extras.resourceTemplates !== undefined || extras.resourceSubscriptions === true;
    this.#resourceList = hasResources ? this.#wireResources() : undefined;
    this.#templateList = hasResources ? this.#wireTemplates() : undefined;
    this.#promptList = extras.prompts === undefined ? undefined : this.#wirePrompts();
    this.capabilities = this.#declared(listChanged);
    this.cachedLists = Object.freeze([
      ...(this.#promptList ? ["prompts/list"] : []),
      ...(this.#resourceList ? ["resources/list", "resources/templates/list"] : []),
    ]);
  }

  #wireResources(): WireList {
    return Object.freeze((this.#extras.resources ?? []).map((r) =>
      deepFreeze(defined({
        uri: r.uri,
        name: r.name,
        title: r.title,
        description: r.description,
        mimeType: r.mimeType,
        size: r.size,
      }))
    ));
  }

  #wireTemplates(): WireList {
    return Object.freeze(this.#templates.map(({ spec }) =>
      deepFreeze(defined({
        uriTemplate: spec.uriTemplate,
        name: spec.name,
        title: spec.title,
        description: spec.description,
        mimeType: spec.mimeType,
      }))
    ));
  }

  #wirePrompts(): WireList {
    return Object.freeze((this.#extras.prompts ?? []).map((p) =>
      deepFreeze(defined({
        name: p.name,
        title: p.title,
        description: p.description,
        arguments: p.arguments ? structuredClone(p.arguments) : undefined,
      }))
    ));
  }

  #declared(listChanged: ServerDefinition["listChanged"]): ServerCapabilities {
    const extras = this.#extras;
    return {
      ...(this.#resourceList
        ? {
          resources: {
            listChanged: listChanged?.resources === true,
            ...(extras.resourceSubscriptions ? { subscribe: true } : {}),
          },
        }
        : {}),
      ...(this.#promptList ? { prompts: { listChanged: listChanged?.prompts === true } } : {}),
      ...(extras.completions ? { completions: {} } : {}),
      ...(extras.logging ? { logging: {} } : {}),
    };
  }

  install(unit: ServingUnit): void {
    if (this.#promptList) this.#installPrompts(unit, this.#promptList);
    if (this.#resourceList && this.#templateList) {
      this.#installResources(unit, this.#resourceList, this.#templateList);
      if (this.#extras.resourceSubscriptions && !unit.modern) this.#installSubscriptions(unit);
    }
    if (this.#extras.completions) {
      unit.server.server.setRequestHandler(
        "completion/complete",
        (request) => this.#complete(request.params as never),
      );
    }
  }

  isSubscribed(server: McpServer, uri: string): boolean {
    const href = canonicalUri(uri);
    return href !== null && this.#subscriptions.get(server)?.has(href) === true;
  }

  #installPrompts({ server, pageSize, callOf }: ServingUnit, list: WireList): void {
    const s = server.server;
    s.setRequestHandler(
      "prompts/list",
      (request) => page("prompts", "prompts", list, request.params?.cursor, pageSize) as never,
    );
    s.setRequestHandler("prompts/get", async (request, ctx) => {
      const { name } = request.params;
      const prompt = this.#promptByName.get(name);
      if (!prompt) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt ${name} not found`);
      }
      const args = (request.params.arguments ?? {}) as Record<string, string>;
      for (const a of prompt.arguments ?? []) {
        if (a.required && typeof args[a.name] !== "string") {
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `Prompt ${name} needs the argument ${a.name}`,
            { argument: a.name },
          );
        }
      }
      return await prompt.get(args, callOf(ctx)) as never;
    });
  }

  #installResources(unit: ServingUnit, resources: WireList, templates: WireList): void {
    const { server, pageSize, callOf, modern } = unit;
    const s = server.server;
    s.setRequestHandler(
      "resources/list",
      (request) =>
        page("resources", "resources", resources, request.params?.cursor, pageSize) as never,
    );
    s.setRequestHandler(
      "resources/templates/list",
      (request) =>
        page(
          "resourceTemplates",
          "templates",
          templates,
          request.params?.cursor,
          pageSize,
        ) as never,
    );
    s.setRequestHandler("resources/read", async (request, ctx) => {
      const raw = request.params.uri;
      const href = canonicalUri(raw);
      if (href === null) throw invalidUriError(raw);
      const resource = this.#resourceByUri.get(href);
      if (resource) {
        const result = await resource.read(new URL(href), callOf(ctx));
        return withCacheHint(result as ReadResourceResult, resource.cacheHint, modern) as never;
      }
      for (const t of this.#templates) {
        const variables = t.template.match(href);
        if (variables) {
          const result = await t.spec.read(new URL(href), variables, callOf(ctx));
          return withCacheHint(result as ReadResourceResult, t.spec.cacheHint, modern) as never;
        }
      }
      throw new ResourceNotFoundError(raw);
    });
  }

  /** Initialization era only: 2026-07-28 subscribes through subscriptions/listen. */
  #installSubscriptions({ server }: ServingUnit): void {
    const subscribed = new Set<string>();
    this.#subscriptions.set(server, subscribed);
    const known = (uri: string): string => {
      const href = canonicalUri(uri);
      if (
        href === null ||
        (!this.#resourceByUri.has(href) && !this.#templates.some((t) => t.template.match(href)))
      ) {
        throw new ResourceNotFoundError(uri);
      }
      return href;
    };
    server.server.setRequestHandler("resources/subscribe", (request) => {
      subscribed.add(known(request.params.uri));
      return {};
    });
    server.server.setRequestHandler("resources/unsubscribe", (request) => {
      subscribed.delete(known(request.params.uri));
      return {};
    });
  }

  async #complete(params: {
    ref: { type: string; name?: string; uri?: string };
    argument: { name: string; value: string };
    context?: { arguments?: Record<string, string> };
  }): Promise<CompleteResult> {
    const { ref, argument, context } = params;
    if (ref.type === "ref/prompt") {
      const prompt = this.#promptByName.get(ref.name!);
      if (!prompt) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt ${ref.name} not found`);
      }
      return await completion(prompt.complete?.[argument.name], argument.value, context);
    }
    if (ref.type === "ref/resource") {
      const template = this.#templateByPattern.get(ref.uri!);
      if (template) {
        return await completion(template.spec.complete?.[argument.name], argument.value, context);
      }
      const href = canonicalUri(ref.uri!);
      if (href !== null && this.#resourceByUri.has(href)) {
        return await completion(undefined, argument.value, context);
      }
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Resource template ${ref.uri} not found`,
      );
    }
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid completion reference");
  }
}

/** A server definition serving the tools of `full` and its resources, templates and prompts. */
export function withResourcesAndPrompts(full: FullDefinition): ServerDefinition {
  const {
    resources,
    resourceTemplates,
    prompts,
    completions,
    logging,
    resourceSubscriptions,
    ...base
  } = full;
  const extension = new ResourcesAndPromptsExtension(
    { resources, resourceTemplates, prompts, completions, logging, resourceSubscriptions },
    base.listChanged,
  );
  return Object.freeze({ ...base, extension });
}
