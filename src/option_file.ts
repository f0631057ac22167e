/**
 * Files named by command-line options (--arguments-file, --config, --input-responses-file,
 * `tools run FILE`): read only when they are regular files (a FIFO or device is refused without
 * blocking), and parsed as JSON with errors that say where, never what: no message ever echoes
 * a file's content.
 */
import { lstat, open, realpath } from "node:fs/promises";
import { normalized } from "./workspace/roots.ts";
import { constants } from "node:fs";

/** A named option file could not be used; the message names the option and the reason only. */
export class OptionFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OptionFileError";
  }
}

function reason(err: unknown): string {
  const code = (err as { code?: string }).code;
  if (err instanceof Deno.errors.NotFound || code === "ENOENT") return "no such file";
  if (err instanceof Deno.errors.IsADirectory || code === "EISDIR") return "it is a directory";
  if (
    err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied ||
    code === "EACCES" || code === "EPERM"
  ) {
    return "permission denied (`wmcp` grants the files named on its command line; this process was started without them)";
  }
  return code ?? (err as Error).name ?? "unreadable";
}

/**
 * Reads an option's file as UTF-8 text. It is opened without blocking (O_NONBLOCK) and used only
 * if it is a regular file (a link to one is followed: the file is the caller's own choice).
 */
export async function readOptionFile(path: string, option: string): Promise<string> {
  return (await readOptionFileReached(path, option)).text;
}

/** An option file's text, and whether the path reached it without a symbolic link. */
export interface OptionFileText {
  text: string;
  /**
   * The absolute `path` named the file itself: no component of it is a symbolic link (its real
   * path is its lexical one) and the file read is the one it names. Where this is false, what the
   * file holds may be another file's (a link a repository ships can point anywhere), so messages
   * about its content name nothing of it (decision 0060).
   */
  direct: boolean;
}

/** readOptionFile, also telling whether `path` (absolute) reached the file without a link. */
export async function readOptionFileReached(
  path: string,
  option: string,
): Promise<OptionFileText> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new OptionFileError(`cannot read ${option} ${path}: ${reason(err)}`);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) {
      const kind = st.isFIFO()
        ? "a FIFO"
        : st.isCharacterDevice() || st.isBlockDevice()
        ? "a device"
        : st.isSocket()
        ? "a socket"
        : st.isDirectory()
        ? "a directory"
        : "not a regular file";
      throw new OptionFileError(`${option} ${path} is ${kind}; give a regular file`);
    }
    const bytes = await handle.readFile();
    return { text: new TextDecoder().decode(bytes), direct: await reachedDirectly(path, st) };
  } catch (err) {
    if (err instanceof OptionFileError) throw err;
    throw new OptionFileError(`cannot read ${option} ${path}: ${reason(err)}`);
  } finally {
    await handle.close();
  }
}

/**
 * Whether the absolute `path` names the opened file without a link: the entry itself is that
 * regular file (same device and inode, not a link to it) and resolving every component changes
 * nothing. Anything that cannot be checked counts as not direct.
 */
async function reachedDirectly(path: string, opened: { dev: number; ino: number }) {
  try {
    const entry = await lstat(path);
    if (!entry.isFile() || entry.dev !== opened.dev || entry.ino !== opened.ino) return false;
    return await realpath(path) === normalized(path);
  } catch {
    return false;
  }
}

/** Line and column (1-based) of a character offset in text. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

/**
 * A small recursive-descent JSON scanner that stops at the first syntax error: each method
 * reads one production from `i` on, and a failure throws the offset it stopped at.
 */
class JsonScan {
  i = 0;

  constructor(readonly text: string) {}

  /** Stops the scan at the current offset. */
  fail(): never {
    throw this.i;
  }

  /** Skips JSON whitespace. */
  ws(): void {
    const { text } = this;
    while (this.i < text.length && " \t\n\r".includes(text[this.i])) this.i++;
  }

  /** `true`, `false` or `null`: fails at the first character that differs. */
  literal(word: string): void {
    for (const ch of word) if (this.text[this.i++] !== ch) (this.i--, this.fail());
  }

  /** A string from its opening quote: control characters and bad escapes fail. */
  string(): void {
    const { text } = this;
    this.i++; // opening quote
    while (this.i < text.length && text[this.i] !== '"') {
      const c = text.charCodeAt(this.i);
      if (c < 0x20) this.fail();
      if (text[this.i] === "\\") {
        this.i++;
        if (text[this.i] === "u") {
          for (let k = 1; k <= 4; k++) {
            if (!/[0-9a-fA-F]/.test(text[this.i + k] ?? "")) (this.i += k, this.fail());
          }
          this.i += 5;
          continue;
        }
        if (!'"\\/bfnrt'.includes(text[this.i] ?? "x")) this.fail();
      }
      this.i++;
    }
    if (this.i >= text.length) this.fail();
    this.i++;
  }

  /** A number. */
  number(): void {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.i));
    if (!m) this.fail();
    this.i += m![0].length;
  }

  /** An object member's key and its colon, after whitespace. */
  key(): void {
    this.ws();
    if (this.text[this.i] !== '"') this.fail();
    this.string();
    this.ws();
    if (this.text[this.i] !== ":") this.fail();
    this.i++;
  }

  /** After a member or element: `,` (false: another follows) or `close` (true: the end). */
  next(close: string): boolean {
    this.ws();
    if (this.text[this.i] === ",") return void this.i++, false;
    if (this.text[this.i] === close) return void this.i++, true;
    this.fail();
  }

  /**
   * Any value, after whitespace. Objects and arrays are read here, not in methods of their own,
   * so each level of nesting costs one stack frame (as deep as the scan went before).
   */
  value(): void {
    this.ws();
    const c = this.text[this.i];
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      this.i++;
      this.ws();
      if (this.text[this.i] === close) return void this.i++;
      do {
        if (c === "{") this.key();
        this.value();
      } while (!this.next(close));
      return;
    }
    if (c === '"') return this.string();
    if (c === "t") return this.literal("true");
    if (c === "f") return this.literal("false");
    if (c === "n") return this.literal("null");
    this.number();
  }
}

/**
 * The offset of the first syntax error in text that JSON.parse rejected (a small recursive-descent
 * scan; V8's messages give no position for an unexpected token).
 */
function jsonErrorOffset(text: string): number {
  const scan = new JsonScan(text);
  try {
    scan.value();
    scan.ws();
    if (scan.i < text.length) scan.fail();
  } catch (at) {
    // Anything else (nesting too deep for the stack): no position.
    return typeof at === "number" ? Math.min(at, text.length) : -1;
  }
  return text.length;
}

/**
 * Parses JSON text; on failure the error says where (line and column) and never quotes the text
 * (V8's own messages do quote it).
 */
export function parseJsonText(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    if (text.trim() === "") throw new OptionFileError(`${what} is not valid JSON: it is empty`);
    const offset = jsonErrorOffset(text);
    if (offset < 0) throw new OptionFileError(`${what} is not valid JSON`);
    const { line, column } = lineColumn(text, offset);
    throw new OptionFileError(`${what} is not valid JSON at line ${line} column ${column}`);
  }
}
