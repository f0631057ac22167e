/**
 * Workaround: the MCP SDK's Client writes a `console.warn` line for each tool it drops from
 * tools/list for an invalid `x-mcp-header` declaration (SEP-2243), with no logger option to
 * route or silence it. The client already reports such tools once in its own words, so while
 * the SDK lists tools for header mirroring, exactly these lines are held back; every other
 * console.warn passes through.
 *
 * Upstream: modelcontextprotocol/typescript-sdk#2370 "feat: add injectable SDK logger" (open;
 * its review notes this very warning still goes to the console); the warning came with #2327.
 * Checked: @modelcontextprotocol/client 2.4.0 (`_excludeInvalidXMcpHeaderTools`), Deno 2.9.6.
 * Delete when: tests/workarounds/sdk_console_warn_test.ts fails (the SDK no longer calls
 * console.warn for an excluded tool); then pass the SDK's logger option instead, if it has one.
 */

/** The prefix of the SDK's warning for a tool it excludes from tools/list. */
export const SDK_TOOL_EXCLUSION_WARNING = "[mcp-sdk] excluding tool";

/**
 * Runs fn with the SDK's tool-exclusion warnings held back; console.warn is restored when fn
 * settles, whatever it did.
 */
export async function withoutSdkToolExclusionWarnings<T>(fn: () => Promise<T>): Promise<T> {
  const sdkWarn = console.warn;
  console.warn = (...a: unknown[]) => {
    if (!String(a[0]).startsWith(SDK_TOOL_EXCLUSION_WARNING)) sdkWarn(...a);
  };
  try {
    return await fn();
  } finally {
    console.warn = sdkWarn;
  }
}
