/** Reads one JSON arguments object from exactly one of --arguments, --arguments-file, --arguments-stdin. */
import { resolveFromInvocation, UsageError } from "../config.ts";
import { OptionFileError, parseJsonText, readOptionFile } from "../option_file.ts";

/** The three mutually exclusive sources of tool/operation arguments. */
export interface ArgumentSources {
  arguments?: string;
  "arguments-file"?: string;
  "arguments-stdin"?: boolean;
}

async function readStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

/** Parses the arguments object; none given means {}. */
export async function readArguments(src: ArgumentSources): Promise<Record<string, unknown>> {
  const given = [
    src.arguments !== undefined,
    src["arguments-file"] !== undefined,
    src["arguments-stdin"] === true,
  ]
    .filter(Boolean).length;
  if (given > 1) {
    throw new UsageError("give at most one of --arguments, --arguments-file, --arguments-stdin");
  }
  let text: string;
  let from: string;
  if (src.arguments !== undefined) {
    text = src.arguments;
    from = "--arguments";
  } else if (src["arguments-file"] !== undefined) {
    from = `--arguments-file ${src["arguments-file"]}`;
    try {
      text = await readOptionFile(resolveFromInvocation(src["arguments-file"]), "--arguments-file");
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  } else if (src["arguments-stdin"]) {
    from = "--arguments-stdin";
    text = await readStdin();
  } else {
    return {};
  }
  let value: unknown;
  try {
    value = parseJsonText(text, from);
  } catch (err) {
    // Where the text is wrong, never what it says: the file may be anything.
    throw new UsageError(
      err instanceof OptionFileError ? err.message : `${from} is not valid JSON`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new UsageError(`${from} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}
