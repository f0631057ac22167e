/**
 * How the client answers elicitations: not at all (non-interactive: elicitation is not
 * advertised; a legacy request that arrives anyway is declined), from a responses file
 * given in advance, or by prompting on a terminal.
 */
import { streams, writeText } from "../std_streams.ts";
import { ClientError } from "./errors.ts";
import { parseJsonText, readOptionFile } from "../option_file.ts";
import { terminalLine } from "./terminal_text.ts";

/** A form elicitation's parameters (the fields the client uses). */
export interface ElicitParams {
  message?: string;
  mode?: string;
  requestedSchema?: {
    type?: string;
    properties?: Record<string, PropertySchema>;
    required?: string[];
  };
}

interface PropertySchema {
  type?: string;
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  oneOf?: { const?: unknown; title?: string }[];
  minimum?: number;
  maximum?: number;
  /** A multi-select field (`type: "array"`): its options, untitled or titled. */
  items?: { type?: string; enum?: unknown[]; anyOf?: { const?: unknown; title?: string }[] };
  minItems?: number;
  maxItems?: number;
}

/** One option of a choice field: the value sent, and what a person reads (a title, or the value). */
interface Choice {
  value: unknown;
  label: string;
}

/** A choice field's options, and whether several may be picked. */
interface ChoiceField {
  choices: Choice[];
  multiple: boolean;
}

/** The values a wrong answer is told to choose from (escaped: a server wrote them). */
function optionValues(choices: Choice[]): string {
  return terminalLine(choices.map((c) => String(c.value)).join(", "));
}

/** The options of a single-select (enum, oneOf) or multi-select (array of enum, anyOf) field. */
function choicesOf(schema: PropertySchema): ChoiceField | undefined {
  const titled = (list: { const?: unknown; title?: string }[]) =>
    list.map((o) => ({
      value: o.const,
      label: o.title !== undefined && o.title !== String(o.const)
        ? `${o.title} (${String(o.const)})`
        : String(o.const),
    }));
  const plain = (list: unknown[]) => list.map((v) => ({ value: v, label: String(v) }));
  if (schema.type === "array" && schema.items) {
    const { enum: values, anyOf } = schema.items;
    if (values) return { choices: plain(values), multiple: true };
    if (anyOf) return { choices: titled(anyOf), multiple: true };
    return undefined;
  }
  if (schema.enum) return { choices: plain(schema.enum), multiple: false };
  if (schema.oneOf) return { choices: titled(schema.oneOf), multiple: false };
  return undefined;
}

/** The hint a choice field's prompt shows: its numbered options, and how many to pick. */
function choiceHint(c: ChoiceField, schema: PropertySchema): string {
  const options = c.choices.map((o, i) => `${i + 1}=${o.label}`).join(" | ");
  if (!c.multiple) return `one of ${options}`;
  const bounds = [
    schema.minItems !== undefined ? `at least ${schema.minItems}` : "",
    schema.maxItems !== undefined ? `at most ${schema.maxItems}` : "",
  ].filter(Boolean).join(" and ");
  return `any of ${options}, comma-separated${bounds ? ` (${bounds})` : ""}`;
}

/** The option a word names: its value as text, or its number (from 1). */
function pick(word: string, choices: Choice[]): Choice | undefined {
  return choices.find((c) => String(c.value) === word) ??
    (/^\d+$/.test(word) ? choices[Number(word) - 1] : undefined);
}

/** A multi-select answer: comma-separated options, each once, within minItems and maxItems. */
function parseMany(
  raw: string,
  choices: Choice[],
  schema: PropertySchema,
): { ok: true; value: unknown } | { ok: false; why: string } {
  const picked: unknown[] = [];
  for (const word of raw.split(",").map((w) => w.trim()).filter((w) => w !== "")) {
    const hit = pick(word, choices);
    if (hit === undefined) {
      return {
        ok: false,
        why: `${terminalLine(word)} is not an option; choose from ${optionValues(choices)}`,
      };
    }
    if (!picked.includes(hit.value)) picked.push(hit.value);
  }
  if (schema.minItems !== undefined && picked.length < schema.minItems) {
    return { ok: false, why: `choose at least ${schema.minItems}` };
  }
  if (schema.maxItems !== undefined && picked.length > schema.maxItems) {
    return { ok: false, why: `choose at most ${schema.maxItems}` };
  }
  return { ok: true, value: picked };
}

/** An elicitation answer. */
export interface ElicitAnswer {
  [key: string]: unknown;
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown>;
}

/** The answering policy of one client run. */
export interface Interaction {
  /** Whether the client declares the elicitation capability (only when it can answer). */
  readonly advertisesElicitation: boolean;
  /** Answers one elicitation. */
  elicit(params: ElicitParams): Promise<ElicitAnswer>;
  /** How many elicitations were answered. */
  readonly answered: number;
}

/** Non-interactive: nothing advertised; anything that arrives anyway is declined. */
export function nonInteractive(): Interaction {
  let answered = 0;
  return {
    advertisesElicitation: false,
    elicit: () => {
      answered++;
      return Promise.resolve({ action: "decline" });
    },
    get answered() {
      return answered;
    },
  };
}

/**
 * Answers from a file given in advance: `{"responses": [answer, ...]}` where each answer is
 * `{"action":"accept","content":{...}}`, `{"action":"decline"}` or `{"action":"cancel"}`,
 * used in order; optional `"default"` answers any elicitation past the list (else cancel).
 */
export async function fromResponsesFile(path: string): Promise<Interaction> {
  let parsed: unknown;
  try {
    parsed = parseJsonText(
      await readOptionFile(path, "--input-responses-file"),
      `--input-responses-file ${path}`,
    );
  } catch (err) {
    // The message names the file and where it is wrong, never its content.
    throw new ClientError("usage", (err as Error).message);
  }
  const p = parsed as { responses?: unknown; default?: unknown };
  if (!Array.isArray(p?.responses)) {
    throw new ClientError("usage", `${path} must be {"responses": [...], "default"?: {...}}`);
  }
  const check = (a: unknown, where: string): ElicitAnswer => {
    const x = a as ElicitAnswer;
    if (!x || !["accept", "decline", "cancel"].includes(x.action)) {
      throw new ClientError("usage", `${where}: action must be accept, decline or cancel`);
    }
    if (x.action === "accept" && (typeof x.content !== "object" || x.content === null)) {
      throw new ClientError("usage", `${where}: accept needs a content object`);
    }
    return x;
  };
  const queue = p.responses.map((a, i) => check(a, `${path} responses[${i}]`));
  const fallback = p.default === undefined ? undefined : check(p.default, `${path} default`);
  let answered = 0;
  return {
    advertisesElicitation: true,
    elicit: (params) => {
      answered++;
      const answer = queue.shift() ?? fallback ?? { action: "cancel" };
      return Promise.resolve(withDefaults(answer, params));
    },
    get answered() {
      return answered;
    },
  };
}

/** An accepted answer gets the form's defaults for every field it leaves out (as a prompt's empty answer would). */
export function withDefaults(answer: ElicitAnswer, params: ElicitParams): ElicitAnswer {
  if (answer.action !== "accept") return answer;
  const content = { ...(answer.content ?? {}) };
  for (const [name, schema] of Object.entries(params.requestedSchema?.properties ?? {})) {
    if (!(name in content) && schema.default !== undefined) content[name] = schema.default;
  }
  return { ...answer, content };
}

/** A line reader over stdin that keeps what it read past the current line for the next call. */
function lineReader(): (prompt: string) => Promise<string | null> {
  let pending = "";
  let ended = false;
  const dec = new TextDecoder();
  const buf = new Uint8Array(4096);
  return async (prompt) => {
    await writeText(streams().stderr, prompt);
    while (true) {
      const nl = pending.indexOf("\n");
      if (nl !== -1) {
        const line = pending.slice(0, nl).replace(/\r$/, "");
        pending = pending.slice(nl + 1);
        return line;
      }
      if (ended) {
        const rest = pending;
        pending = "";
        return rest.length ? rest : null;
      }
      const n = await Deno.stdin.read(buf);
      if (n === null) ended = true;
      else pending += dec.decode(buf.subarray(0, n), { stream: true });
    }
  };
}

function parseValue(
  raw: string,
  schema: PropertySchema,
): { ok: true; value: unknown } | { ok: false; why: string } {
  const choice = choicesOf(schema);
  if (choice?.multiple) return parseMany(raw, choice.choices, schema);
  if (choice) {
    const hit = pick(raw, choice.choices);
    return hit === undefined
      ? { ok: false, why: `choose one of ${optionValues(choice.choices)}` }
      : { ok: true, value: hit.value };
  }
  switch (schema.type) {
    case "boolean":
      if (/^(y|yes|true|1)$/i.test(raw)) return { ok: true, value: true };
      if (/^(n|no|false|0)$/i.test(raw)) return { ok: true, value: false };
      return { ok: false, why: "answer yes or no" };
    case "integer":
    case "number": {
      const n = Number(raw);
      if (
        raw.trim() === "" || !Number.isFinite(n) ||
        (schema.type === "integer" && !Number.isInteger(n))
      ) {
        return { ok: false, why: `enter ${schema.type === "integer" ? "an integer" : "a number"}` };
      }
      if (schema.minimum !== undefined && n < schema.minimum) {
        return { ok: false, why: `at least ${schema.minimum}` };
      }
      if (schema.maximum !== undefined && n > schema.maximum) {
        return { ok: false, why: `at most ${schema.maximum}` };
      }
      return { ok: true, value: n };
    }
    default:
      return { ok: true, value: raw };
  }
}

/** Who is asking, as the prompt names it. */
export interface Asker {
  /** The user's own name for the server: the config entry, the endpoint's origin, `bundled`. */
  label?: string;
  /** The name the server gave itself at initialize (read when a prompt is drawn). */
  serverName?: () => unknown;
}

/**
 * `[server "label" (calls itself "name")]`: the user's own label first (it cannot be spoofed), the
 * name the server gave beside it when it differs; both one line of text.
 */
export function askerText(asker: Asker): string {
  const label = asker.label === undefined ? undefined : `"${terminalLine(asker.label)}"`;
  const given = asker.serverName?.();
  const name = typeof given === "string" && given !== "" && given !== asker.label
    ? `"${terminalLine(given)}"`
    : undefined;
  if (label && name) return `[server ${label} (calls itself ${name})]`;
  return `[server${label ? ` ${label}` : name ? ` ${name}` : ""}]`;
}

/**
 * Prompts on the terminal (stderr for prompts, stdin for answers): each field of the form
 * (string, number, integer, boolean, enums; an empty answer takes the default), then
 * accept, decline or cancel. Server text is only printed, never run: the server is named beside
 * it, and each message, title, description and choice is one line through terminalLine (0042),
 * so it can neither style the terminal nor redraw the question.
 */
export function terminalPrompts(asker: Asker = {}): Interaction {
  let answered = 0;
  const readLine = lineReader();
  return {
    advertisesElicitation: true,
    async elicit(params) {
      answered++;
      if (params.mode === "url") return { action: "decline" };
      const say = (s: string) => writeText(streams().stderr, s + "\n");
      const message = typeof params.message === "string" ? params.message : "(no message)";
      await say(`\n${askerText(asker)} asks: ${terminalLine(message)}`);
      const props = params.requestedSchema?.properties ?? {};
      const required = new Set(params.requestedSchema?.required ?? []);
      const content: Record<string, unknown> = {};
      for (const [name, schema] of Object.entries(props)) {
        const choice = choicesOf(schema);
        const hint = [
          schema.type ?? "string",
          choice ? choiceHint(choice, schema) : "",
          schema.default !== undefined ? `default ${JSON.stringify(schema.default)}` : "",
          required.has(name) ? "required" : "optional",
        ].filter(Boolean).join(", ");
        while (true) {
          const raw = await readLine(
            `  ${terminalLine(String(schema.title ?? name))} (${terminalLine(hint)})${
              schema.description ? ` - ${terminalLine(String(schema.description))}` : ""
            }: `,
          );
          if (raw === null) return { action: "cancel" };
          if (raw === "") {
            if (schema.default !== undefined) content[name] = schema.default;
            else if (required.has(name)) {
              await say("    a value is required");
              continue;
            }
            break;
          }
          const v = parseValue(raw, schema);
          if (v.ok) {
            content[name] = v.value;
            break;
          }
          await say(`    ${v.why}`);
        }
      }
      while (true) {
        const choice = await readLine("  [a]ccept, [d]ecline or [c]ancel? ");
        if (choice === null || /^c/i.test(choice)) return { action: "cancel" };
        if (/^a/i.test(choice)) return { action: "accept", content };
        if (/^d/i.test(choice)) return { action: "decline" };
      }
    },
    get answered() {
      return answered;
    },
  };
}
