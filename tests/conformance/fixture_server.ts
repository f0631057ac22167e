/**
 * Conformance fixture server: the tools, resources and prompts the official MCP conformance
 * suite (`conformance server`) calls, served by exactly the same HTTP handler (guards, era
 * routing, legacy sessions) and server factory as the workspace server. Only the
 * definition differs (its resources, prompts and completions: tests/_support/resources_prompts.ts). Not shipped; run by tests/conformance/run_server_suite.ts.
 *
 *   deno run --allow-net=127.0.0.1 --unstable-no-legacy-abort \
 *     tests/conformance/fixture_server.ts [--port N]
 *
 * Prints one ready line `{"event":"ready","url":...,"pid":...}` on stdout; SIGINT/SIGTERM stop it.
 * Every handler is written once for both eras: 2026-07-28 clients get input_required
 * results, initialization-era clients get real elicitation/sampling/roots requests from
 * the SDK's legacy shim.
 */
import { parseArgs } from "node:util";
import {
  type CallToolResult,
  type ContentBlock,
  type GetPromptResult,
  inputRequired,
  type InputRequiredResult,
  inputResponse,
  type InputResponseView,
  type ServerNotifier,
} from "@modelcontextprotocol/server";
import {
  type CachedSchema,
  cachedSchema,
  type CallContext,
  NO_ARGUMENTS,
  type ServerDefinition,
  type StandardValidate,
  type ToolSpec,
} from "../../src/server/definition.ts";
import {
  type PromptSpec,
  type ResourceSpec,
  type ResourceTemplateSpec,
  withResourcesAndPrompts,
} from "../_support/resources_prompts.ts";
import { createHttpHandler } from "../../src/server/http.ts";

/** A 1x1 red PNG. */
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/** A minimal WAV file. */
const WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const text = (t: string): CallToolResult => ({ content: [{ type: "text", text: t }] });

/** An object schema whose listed properties are required strings. */
function stringArguments(fields: Record<string, string>): CachedSchema {
  const names = Object.keys(fields);
  const validate: StandardValidate = (value) => {
    const v = (value ?? {}) as Record<string, unknown>;
    const issues = names.filter((n) => typeof v[n] !== "string").map((n) => ({
      message: `${n} must be a string`,
      path: [n],
    }));
    return issues.length > 0 ? { issues } : { value: v };
  };
  return cachedSchema({
    type: "object",
    properties: Object.fromEntries(
      names.map((n) => [n, { type: "string", description: fields[n] }]),
    ),
    required: names,
  }, validate);
}

/** The answer to one input request of a retried call. */
function answer(call: CallContext, key: string): InputResponseView {
  return inputResponse(call.ctx.mcpReq.inputResponses, key);
}

function acceptedString(view: InputResponseView, field: string): string | undefined {
  if (view.kind !== "elicit" || view.action !== "accept") return undefined;
  const v = view.content?.[field];
  return typeof v === "string" ? v : undefined;
}

function samplingText(view: InputResponseView): string | undefined {
  if (view.kind !== "sampling") return undefined;
  const content = view.result.content as { type?: string; text?: unknown } | undefined;
  return content?.type === "text" && typeof content.text === "string" ? content.text : undefined;
}

/** The verified requestState payload of this round (the factory checked its MAC). */
function state(call: CallContext): Record<string, unknown> | undefined {
  const s = call.ctx.mcpReq.requestState<unknown>();
  return typeof s === "object" && s !== null ? s as Record<string, unknown> : undefined;
}

const mint = (call: CallContext, payload: Record<string, unknown>) =>
  call.requestState.mint({ ...payload, nonce: crypto.randomUUID() }, call.ctx);

function elicitString(message: string, field: string) {
  return inputRequired.elicit({
    message,
    requestedSchema: {
      type: "object",
      properties: { [field]: { type: "string" } },
      required: [field],
    },
  });
}

const elicitResultText = (prefix: string, view: InputResponseView) =>
  view.kind === "elicit"
    ? `${prefix}: action=${view.action}, content=${JSON.stringify(view.content ?? {})}`
    : `${prefix}: no elicitation answer`;

function tool(
  name: string,
  description: string,
  handler: ToolSpec["handler"],
  inputSchema: CachedSchema = NO_ARGUMENTS,
): ToolSpec {
  return Object.freeze({ name, description, inputSchema, handler });
}

// ---------------------------------------------------------------- tools

/** The HTTP handler's change announcer, bound once the handler exists. */
let notifier: ServerNotifier | undefined;

const TOOLS: ToolSpec[] = [
  tool(
    "test_simple_text",
    "Tests simple text content response",
    () => text("This is a simple text response for testing."),
  ),
  tool("test_image_content", "Tests image content response", () => ({
    content: [{ type: "image", data: PNG, mimeType: "image/png" }],
  })),
  tool("test_audio_content", "Tests audio content response", () => ({
    content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }],
  })),
  tool("test_embedded_resource", "Tests embedded resource content response", () => ({
    content: [{
      type: "resource",
      resource: {
        uri: "test://embedded-resource",
        mimeType: "text/plain",
        text: "This is an embedded resource content.",
      },
    }],
  })),
  tool(
    "test_multiple_content_types",
    "Tests response with multiple content types (text, image, resource)",
    () => ({
      content: [
        { type: "text", text: "Multiple content types test:" },
        { type: "image", data: PNG, mimeType: "image/png" },
        {
          type: "resource",
          resource: {
            uri: "test://mixed-content-resource",
            mimeType: "application/json",
            text: JSON.stringify({ test: "data", value: 123 }),
          },
        },
      ] satisfies ContentBlock[],
    }),
  ),
  tool(
    "test_tool_with_logging",
    "Tests tool that emits log messages during execution",
    async (_args, { ctx }) => {
      // ctx.mcpReq.log honours logging/setLevel (legacy) and the envelope logLevel (modern).
      await ctx.mcpReq.log("info", "Tool execution started");
      await sleep(50);
      await ctx.mcpReq.log("info", "Tool processing data");
      await sleep(50);
      await ctx.mcpReq.log("info", "Tool execution completed");
      return text("Tool with logging executed successfully");
    },
  ),
  tool(
    "test_tool_with_progress",
    "Tests tool that reports progress notifications",
    async (_args, { ctx }) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({
            method: "notifications/progress",
            params: {
              progressToken,
              progress,
              total: 100,
              message: `Completed step ${progress} of 100`,
            },
          });
        }
        if (progress < 100) await sleep(50);
      }
      return text(`Progress reported for token ${String(progressToken ?? "(none)")}`);
    },
  ),
  tool("test_error_handling", "Tests error response handling", () => {
    throw new Error("This tool intentionally returns an error for testing");
  }),
  tool(
    "test_sampling",
    "Tests server-initiated sampling (LLM completion request)",
    (args, call) => {
      if (!call.clientCapabilities?.sampling) {
        return { ...text("The client does not support sampling"), isError: true };
      }
      const reply = samplingText(answer(call, "llm"));
      if (reply !== undefined) return text(`LLM response: ${reply}`);
      return inputRequired({
        inputRequests: {
          llm: inputRequired.createMessage({
            messages: [{ role: "user", content: { type: "text", text: String(args.prompt) } }],
            maxTokens: 100,
          }),
        },
      });
    },
    stringArguments({ prompt: "The prompt to send to the LLM" }),
  ),
  tool(
    "test_elicitation",
    "Tests server-initiated elicitation (user input request)",
    (args, call) => {
      if (!call.clientCapabilities?.elicitation) {
        return { ...text("The client does not support elicitation"), isError: true };
      }
      const view = answer(call, "user");
      if (view.kind === "elicit") return text(elicitResultText("User response", view));
      return inputRequired({
        inputRequests: {
          user: inputRequired.elicit({
            message: String(args.message),
            requestedSchema: {
              type: "object",
              properties: {
                username: { type: "string", description: "User's response" },
                email: { type: "string", description: "User's email address" },
              },
              required: ["username", "email"],
            },
          }),
        },
      });
    },
    stringArguments({ message: "The message to show the user" }),
  ),
  tool(
    "test_elicitation_sep1034_defaults",
    "Tests elicitation with default values per SEP-1034",
    (_args, call) => {
      const view = answer(call, "form");
      if (view.kind === "elicit") return text(elicitResultText("Elicitation completed", view));
      return inputRequired({
        inputRequests: {
          form: inputRequired.elicit({
            message: "Please review and update the form fields with defaults",
            requestedSchema: {
              type: "object",
              properties: {
                name: { type: "string", description: "User name", default: "John Doe" },
                age: { type: "integer", description: "User age", default: 30 },
                score: { type: "number", description: "User score", default: 95.5 },
                status: {
                  type: "string",
                  description: "User status",
                  enum: ["active", "inactive", "pending"],
                  default: "active",
                },
                verified: { type: "boolean", description: "Verification status", default: true },
              },
              required: [],
            },
          }),
        },
      });
    },
  ),
  tool(
    "test_elicitation_sep1330_enums",
    "Tests elicitation with enum schema improvements per SEP-1330",
    (_args, call) => {
      const view = answer(call, "choices");
      if (view.kind === "elicit") return text(elicitResultText("Elicitation completed", view));
      return inputRequired({
        inputRequests: {
          choices: inputRequired.elicit({
            message: "Please select options from the enum fields",
            requestedSchema: {
              type: "object",
              properties: {
                untitledSingle: {
                  type: "string",
                  description: "Select one option",
                  enum: ["option1", "option2", "option3"],
                },
                titledSingle: {
                  type: "string",
                  description: "Select one option with titles",
                  oneOf: [
                    { const: "value1", title: "First Option" },
                    { const: "value2", title: "Second Option" },
                    { const: "value3", title: "Third Option" },
                  ],
                },
                legacyEnum: {
                  type: "string",
                  description: "Select one option (legacy)",
                  enum: ["opt1", "opt2", "opt3"],
                  enumNames: ["Option One", "Option Two", "Option Three"],
                },
                untitledMulti: {
                  type: "array",
                  description: "Select multiple options",
                  minItems: 1,
                  maxItems: 3,
                  items: { type: "string", enum: ["option1", "option2", "option3"] },
                },
                titledMulti: {
                  type: "array",
                  description: "Select multiple options with titles",
                  minItems: 1,
                  maxItems: 3,
                  items: {
                    anyOf: [
                      { const: "value1", title: "First Choice" },
                      { const: "value2", title: "Second Choice" },
                      { const: "value3", title: "Third Choice" },
                    ],
                  },
                },
              },
              required: [],
            },
          }),
        },
      });
    },
  ),
  tool(
    "json_schema_2020_12_tool",
    "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
    (args) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
    cachedSchema({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: {
        address: {
          $anchor: "addressDef",
          type: "object",
          properties: { street: { type: "string" }, city: { type: "string" } },
        },
      },
      properties: {
        name: { type: "string" },
        address: { $ref: "#/$defs/address" },
        contactMethod: { type: "string", enum: ["phone", "email"] },
        phone: { type: "string" },
        email: { type: "string" },
      },
      allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
      if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
      then: { required: ["phone"] },
      else: { required: ["email"] },
      additionalProperties: false,
    }),
  ),

  tool(
    "test_custom_header",
    "Mirrors its region argument into the Mcp-Param-Region header (SEP-2243)",
    (args) => text(`region=${String(args.region)}`),
    cachedSchema({
      type: "object",
      properties: {
        region: { type: "string", description: "A region name", "x-mcp-header": "Region" },
      },
      required: ["region"],
    }),
  ),

  // 2026-07-28 multi-round-trip (input_required) tools.
  tool(
    "test_input_required_result_elicitation",
    "MRTR: returns an input_required result with an elicitation request",
    (_args, call) => {
      const name = acceptedString(answer(call, "user_name"), "name");
      if (name !== undefined) return text(`Hello, ${name}!`);
      // Missing, wrong or malformed answers: ask again (never an error).
      return inputRequired({
        inputRequests: { user_name: elicitString("What is your name?", "name") },
      });
    },
  ),
  tool(
    "test_input_required_result_sampling",
    "MRTR: returns an input_required result with a sampling request",
    (_args, call) => {
      const reply = samplingText(answer(call, "capital_question"));
      if (reply !== undefined) return text(`Sampling result: ${reply}`);
      return inputRequired({
        inputRequests: {
          capital_question: inputRequired.createMessage({
            messages: [{
              role: "user",
              content: { type: "text", text: "What is the capital of France?" },
            }],
            maxTokens: 100,
          }),
        },
      });
    },
  ),
  tool(
    "test_input_required_result_list_roots",
    "MRTR: returns an input_required result with a roots/list request",
    (_args, call) => {
      const view = answer(call, "client_roots");
      if (view.kind === "roots") return text(`Found ${view.roots.length} root(s)`);
      return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
    },
  ),
  tool(
    "test_input_required_result_request_state",
    "MRTR: returns an input_required result with inputRequests and an HMAC-sealed requestState",
    async (_args, call) => {
      const view = answer(call, "confirm");
      if (state(call)?.kind === "request-state" && view.kind === "elicit") {
        if (view.action === "accept" && view.content?.ok === true) {
          return text("state-ok: requestState validated");
        }
      }
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: "Please confirm",
            requestedSchema: {
              type: "object",
              properties: { ok: { type: "boolean" } },
              required: ["ok"],
            },
          }),
        },
        requestState: await mint(call, { kind: "request-state" }),
      });
    },
  ),
  tool(
    "test_input_required_result_multiple_inputs",
    "MRTR: returns an input_required result with elicitation, sampling and roots requests",
    async (_args, call) => {
      const name = acceptedString(answer(call, "user_name"), "name");
      const greeting = samplingText(answer(call, "greeting"));
      const roots = answer(call, "client_roots");
      if (
        state(call)?.kind === "multiple-inputs" && name !== undefined && greeting !== undefined &&
        roots.kind === "roots"
      ) {
        return text(`Name: ${name}; Greeting: ${greeting}; Roots: ${roots.roots.length}`);
      }
      return inputRequired({
        inputRequests: {
          user_name: elicitString("What is your name?", "name"),
          greeting: inputRequired.createMessage({
            messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
            maxTokens: 50,
          }),
          client_roots: inputRequired.listRoots(),
        },
        requestState: await mint(call, { kind: "multiple-inputs" }),
      });
    },
  ),
  tool(
    "test_input_required_result_multi_round",
    "MRTR: three rounds, a new requestState each round",
    async (_args, call) => {
      const s = state(call);
      if (s?.kind === "multi-round" && s.round === 1) {
        const name = acceptedString(answer(call, "step1"), "name");
        if (name !== undefined) {
          return inputRequired({
            inputRequests: { step2: elicitString("Step 2: What is your favorite color?", "color") },
            requestState: await mint(call, { kind: "multi-round", round: 2, name }),
          });
        }
      }
      if (s?.kind === "multi-round" && s.round === 2) {
        const color = acceptedString(answer(call, "step2"), "color");
        if (color !== undefined) {
          return text(`Multi-round complete for ${String(s.name)} who likes ${color}`);
        }
      }
      return inputRequired({
        inputRequests: { step1: elicitString("Step 1: What is your name?", "name") },
        requestState: await mint(call, { kind: "multi-round", round: 1 }),
      });
    },
  ),
  tool(
    "test_input_required_result_tampered_state",
    "MRTR: HMAC-sealed requestState; a tampered one is -32602 before this handler runs",
    async (_args, call) => {
      if (state(call)?.kind === "tamper-test" && answer(call, "confirm").kind === "elicit") {
        return text("integrity-ok: state verified");
      }
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: "Please confirm",
            requestedSchema: {
              type: "object",
              properties: { ok: { type: "boolean" } },
              required: ["ok"],
            },
          }),
        },
        requestState: await mint(call, { kind: "tamper-test" }),
      });
    },
  ),
  tool(
    "test_input_required_result_capabilities",
    "MRTR: asks only for what the client declared (elicitation, sampling, roots)",
    async (_args, call) => {
      const responses = Object.keys(call.ctx.mcpReq.inputResponses ?? {});
      if (state(call)?.kind === "capabilities-test" && responses.length > 0) {
        return text(`capabilities-ok: received ${responses.join(",")}`);
      }
      const caps = call.clientCapabilities ?? {};
      const requests: Record<string, ReturnType<typeof inputRequired.listRoots>> = {};
      if (caps.elicitation) requests.elicit_input = elicitString("Elicitation input", "value");
      if (caps.sampling) {
        requests.sample_input = inputRequired.createMessage({
          messages: [{ role: "user", content: { type: "text", text: "Sample request" } }],
          maxTokens: 50,
        });
      }
      if (caps.roots) requests.roots_input = inputRequired.listRoots();
      if (Object.keys(requests).length === 0) return text("No supported capabilities declared");
      return inputRequired({
        inputRequests: requests,
        requestState: await mint(call, { kind: "capabilities-test" }),
      });
    },
  ),

  // 2026-07-28 stateless diagnostics (server-stateless scenario).
  tool(
    "test_missing_capability",
    "Needs sampling: a client that did not declare it gets -32021 (HTTP 400)",
    (_args, call) => {
      const reply = samplingText(answer(call, "needs_sampling"));
      if (reply !== undefined) return text(`Success: ${reply}`);
      // The SDK refuses an input request the client cannot answer with
      // MissingRequiredClientCapabilityError (-32021, data.requiredCapabilities).
      return inputRequired({
        inputRequests: {
          needs_sampling: inputRequired.createMessage({
            messages: [{ role: "user", content: { type: "text", text: "Say hello" } }],
            maxTokens: 20,
          }),
        },
      });
    },
  ),
  tool(
    "test_streaming_elicitation",
    "Elicits through an input_required result on the response stream, never a request",
    async (_args, call) => {
      const progressToken = call.ctx.mcpReq._meta?.progressToken;
      if (progressToken !== undefined) {
        await call.ctx.mcpReq.notify({
          method: "notifications/progress",
          params: { progressToken, progress: 50, total: 100 },
        });
      }
      if (answer(call, "stream_input").kind === "elicit") return text("Streaming complete");
      return inputRequired({
        inputRequests: { stream_input: elicitString("Streaming input", "value") },
      });
    },
  ),
  tool("test_trigger_tool_change", "Announces a tools/list change (listChanged)", () => {
    notifier?.toolsChanged();
    return text("Tool list change announced");
  }),
  tool("test_trigger_prompt_change", "Announces a prompts/list change (listChanged)", () => {
    notifier?.promptsChanged();
    return text("Prompt list change announced");
  }),
  tool(
    "test_logging_tool",
    "Logs one message; the SDK drops it unless the request set a logLevel",
    async (_args, { ctx }) => {
      await ctx.mcpReq.log("info", "Diagnostic trace logging activated");
      return text("Logging evaluated");
    },
  ),
];

// ------------------------------------------------------------ resources

const RESOURCES: ResourceSpec[] = [
  {
    uri: "test://static-text",
    name: "static-text",
    title: "Static Text Resource",
    description: "A static text resource for testing",
    mimeType: "text/plain",
    read: (uri) => ({
      contents: [{
        uri: uri.href,
        mimeType: "text/plain",
        text: "This is the content of the static text resource.",
      }],
    }),
  },
  {
    uri: "test://static-binary",
    name: "static-binary",
    title: "Static Binary Resource",
    description: "A static binary resource (image) for testing",
    mimeType: "image/png",
    read: (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG }] }),
  },
  {
    uri: "test://watched-resource",
    name: "watched-resource",
    title: "Watched Resource",
    description: "A resource clients can subscribe to",
    mimeType: "text/plain",
    read: (uri) => ({
      contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched resource content" }],
    }),
  },
];

const TEMPLATES: ResourceTemplateSpec[] = [{
  uriTemplate: "test://template/{id}/data",
  name: "template",
  title: "Resource Template",
  description: "A resource template with parameter substitution",
  mimeType: "application/json",
  complete: { id: (value) => ["123", "456", "789"].filter((v) => v.startsWith(value)) },
  read: (uri, variables) => ({
    contents: [{
      uri: uri.href,
      mimeType: "application/json",
      text: JSON.stringify({
        id: variables.id,
        templateTest: true,
        data: `Data for ID: ${variables.id}`,
      }),
    }],
  }),
}];

// -------------------------------------------------------------- prompts

const userText = (t: string): GetPromptResult["messages"][number] => ({
  role: "user",
  content: { type: "text", text: t },
});

const PROMPTS: PromptSpec[] = [
  {
    name: "test_simple_prompt",
    title: "Simple Test Prompt",
    description: "A simple prompt without arguments",
    get: () => ({ messages: [userText("This is a simple prompt for testing.")] }),
  },
  {
    name: "test_prompt_with_arguments",
    title: "Prompt With Arguments",
    description: "A prompt with required arguments",
    arguments: [
      { name: "arg1", description: "First test argument", required: true },
      { name: "arg2", description: "Second test argument", required: true },
    ],
    complete: {
      arg1: (value) =>
        ["paris", "park", "party", "test", "testing"].filter((v) => v.startsWith(value)),
    },
    get: (args) => ({
      messages: [userText(`Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'`)],
    }),
  },
  {
    name: "test_prompt_with_embedded_resource",
    title: "Prompt With Embedded Resource",
    description: "A prompt that includes an embedded resource",
    arguments: [{
      name: "resourceUri",
      description: "URI of the resource to embed",
      required: true,
    }],
    get: (args) => ({
      messages: [
        {
          role: "user",
          content: {
            type: "resource",
            resource: {
              uri: args.resourceUri,
              mimeType: "text/plain",
              text: "Embedded resource content for testing.",
            },
          },
        },
        userText("Please process the embedded resource above."),
      ],
    }),
  },
  {
    name: "test_prompt_with_image",
    title: "Prompt With Image",
    description: "A prompt that includes image content",
    get: () => ({
      messages: [
        { role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
        userText("Please analyze the image above."),
      ],
    }),
  },
  {
    name: "test_input_required_result_prompt",
    description: "MRTR: a prompt that needs elicitation input first",
    get: (_args, call): GetPromptResult | InputRequiredResult => {
      const context = acceptedString(answer(call, "user_context"), "context");
      if (context !== undefined) return { messages: [userText(`Prompt with context: ${context}`)] };
      return inputRequired({
        inputRequests: {
          user_context: elicitString("What context should the prompt use?", "context"),
        },
      });
    },
  },
];

/** The fixture's server definition. */
export const FIXTURE_DEFINITION: ServerDefinition = withResourcesAndPrompts({
  name: "wmcp-conformance-fixture",
  version: "0.0.0",
  instructions: "Conformance fixture for wmcp's MCP server stack; not a workspace server.",
  tools: Object.freeze(TOOLS),
  resources: Object.freeze(RESOURCES),
  resourceTemplates: Object.freeze(TEMPLATES),
  prompts: Object.freeze(PROMPTS),
  completions: true,
  logging: true,
  resourceSubscriptions: true,
  listChanged: { tools: true, prompts: true },
});

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: { port: { type: "string", default: "0" } },
    strict: true,
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error("fixture: --port must be 0..65535");
    return 2;
  }
  const handler = createHttpHandler({
    definition: FIXTURE_DEFINITION,
    onError: (err) => console.error(`fixture: error: ${err.message}`),
  });
  notifier = handler.notify;
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, handler.fetch);
  const url = `http://127.0.0.1:${server.addr.port}/mcp`;
  await Deno.stdout.write(
    new TextEncoder().encode(JSON.stringify({ event: "ready", url, pid: Deno.pid }) + "\n"),
  );
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, () => stop());
  await stopped;
  handler.closeIdleStreams();
  await Promise.race([server.shutdown(), sleep(2000)]);
  await handler.close();
  return 0;
}

if (import.meta.main) Deno.exit(await main());
