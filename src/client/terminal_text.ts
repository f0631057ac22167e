/**
 * The one way text a server supplies reaches a terminal (docs/decisions/0042): every control
 * character (C0, DEL, C1: `\p{Cc}`), every Unicode bidirectional control and the line and
 * paragraph separators are written as a visible `\uXXXX`, so a server can neither run a
 * terminal sequence (OSC title or clipboard writes, SGR colours, cursor moves, line erases) nor
 * reorder or break what a person reads. No dependencies: src/client and src/cli both use it.
 */

/** The bidi controls (embeddings, overrides, isolates, marks) and the line/paragraph separators. */
const INVISIBLE = "\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069";

const escapeOf = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

const BLOCK_UNSAFE = new RegExp(`(?![\\n\\t])[\\p{Cc}${INVISIBLE}]`, "gu");
const ALL_UNSAFE = new RegExp(`[\\p{Cc}${INVISIBLE}]`, "gu");
/** What one-line text folds into a single space: a run of line breaks, returns and tabs. */
const LINE_BREAKS = /[\r\n\t\v\f\x85\u2028\u2029]+/g;

/**
 * Block text (a result, instructions, a description): newline and tab kept, every other control,
 * bidi control and separator escaped as `\uXXXX`.
 */
export function terminalSafe(text: string): string {
  return text.replace(BLOCK_UNSAFE, escapeOf);
}

/**
 * One-line text (a progress message, a prompt, an error or warning line): each run of line
 * breaks, carriage returns and tabs folded into one space, then every remaining
 * control, bidi control and separator escaped as `\uXXXX`. The result never moves the cursor to
 * another line or back to the start of this one.
 */
export function terminalLine(text: string): string {
  return text.replace(LINE_BREAKS, " ").replace(ALL_UNSAFE, escapeOf);
}

/**
 * JSON text made safe for a terminal without changing what it means: JSON.stringify leaves DEL,
 * the C1 controls, the bidi controls and U+2028/U+2029 raw; they can only sit inside a string
 * there, where `\uXXXX` is the same character to a parser. Structural newlines are kept.
 */
export function terminalJson(json: string): string {
  return json.replace(BLOCK_UNSAFE, escapeOf);
}
