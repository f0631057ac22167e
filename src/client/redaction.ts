/**
 * The redaction rule of client messages: a value that came from a `${VAR}` expansion of a
 * config entry is shown as `${VAR}`, never expanded (INTERFACES.md, "Bundled ad hoc MCP tool
 * client"). The config loader notes every expansion here; every ClientError message, JSON
 * error object and warning passes through `redacted` (messages of the SDK and the runtime
 * quote values we do not control: a URL, a header or an environment value).
 */

/** Values shorter than this are not redacted: replacing `1` would garble "exit code 1". */
const MIN_REDACTED = 4;

/** Expanded value → the `${VAR}` it came from; longest first when applied. */
const expansions = new Map<string, string>();

/** Records that `${name}` expanded to `value` (called by the config loader). */
export function noteExpansion(name: string, value: string): void {
  if (value.length < MIN_REDACTED) return;
  expansions.set(value, `\${${name}}`);
}

/** Forgets every recorded expansion (tests). */
export function clearExpansions(): void {
  expansions.clear();
}

/** The forms an expanded value may take in a message: as is, lowercased (a URL host), encoded. */
function formsOf(value: string): string[] {
  const forms = new Set([value, value.toLowerCase(), encodeURIComponent(value), encodeURI(value)]);
  return [...forms].filter((f) => f.length >= MIN_REDACTED);
}

/** text with every expanded value (in each of its forms) replaced by its `${VAR}`. */
export function redacted(text: string): string {
  if (expansions.size === 0) return text;
  const pairs = [...expansions].flatMap(([v, name]) => formsOf(v).map((f) => [f, name]));
  pairs.sort((a, b) => b[0].length - a[0].length);
  let out = text;
  for (const [form, name] of pairs) out = out.split(form).join(name);
  return out;
}

/** v with `redacted` applied to every string in it (keys included): a JSON error's details. */
export function redactedDeep(v: unknown): unknown {
  if (expansions.size === 0) return v;
  if (typeof v === "string") return redacted(v);
  if (Array.isArray(v)) return v.map(redactedDeep);
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [redacted(k), redactedDeep(x)]),
    );
  }
  return v;
}
