/** The one check that a promise rejects with a typed WorkspaceError, shared by every suite. */
import assert from "node:assert/strict";
import { type ErrorCode, WorkspaceError } from "../../mod.ts";

/** What expectError checks besides the code. */
export interface ExpectErrorOptions {
  /**
   * The argument the error must name. Omitted: not checked; given (even as undefined, with
   * `checkArgument: true`): must be exactly this.
   */
  argument?: string;
  /** Check `argument` even when it is undefined (the error must then name none). */
  checkArgument?: boolean;
  /** Prefix of every assertion message. */
  label?: string;
  /** Strings the error's JSON must never contain (secrets, outside paths). */
  forbidden?: readonly string[];
}

/**
 * Awaits p, which must reject with a WorkspaceError of one of the codes; checks its argument
 * (when asked), that its JSON form (what every adapter reports) keeps code and message and
 * reveals nothing forbidden; returns it.
 */
export async function expectError(
  p: Promise<unknown>,
  codes: ErrorCode | readonly ErrorCode[],
  options: ExpectErrorOptions = {},
): Promise<WorkspaceError> {
  const want: readonly ErrorCode[] = typeof codes === "string" ? [codes] : codes;
  const label = options.label ?? "";
  let result: unknown;
  try {
    result = await p;
  } catch (err) {
    if (!(err instanceof WorkspaceError)) {
      throw new assert.AssertionError({
        message: `${label}: expected a WorkspaceError ${want.join("|")}, got ${
          err instanceof Error ? err.stack : err
        }`,
      });
    }
    assert.ok(
      want.includes(err.code),
      `${label}: expected ${want.join("|")}, got ${err.code}: ${err.message}`,
    );
    if (options.checkArgument || options.argument !== undefined) {
      assert.equal(err.argument, options.argument, `${label}: error names the wrong argument`);
    }
    const text = JSON.stringify(err.toJSON());
    const json = JSON.parse(text);
    assert.equal(json.code, err.code, `${label}: the JSON form keeps the code`);
    assert.equal(typeof json.message, "string", `${label}: the JSON form has a message`);
    for (const s of options.forbidden ?? []) {
      assert.ok(!text.includes(s), `${label}: the error reveals ${JSON.stringify(s)}`);
    }
    return err;
  }
  throw new assert.AssertionError({
    message: `${label}: expected ${want.join("|")} but it succeeded: ${
      String(JSON.stringify(result)).slice(0, 300)
    }`,
  });
}
