/**
 * Files named by command-line options (--arguments-file, --config, --input-responses-file,
 * `tools run FILE`): read only when they are regular files (a FIFO or device is refused without
 * blocking), and parsed as JSON with errors that say where, never what: no message ever echoes
 * a file's content.
 */
import { open } from "node:fs/promises";
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
    return new TextDecoder().decode(bytes);
  } catch (err) {
    if (err instanceof OptionFileError) throw err;
    throw new OptionFileError(`cannot read ${option} ${path}: ${reason(err)}`);
  } finally {
    await handle.close();
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
 * The offset of the first syntax error in text that JSON.parse rejected (a small recursive-descent
 * scan; V8's messages give no position for an unexpected token).
 */
function jsonErrorOffset(text: string): number {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = (word: string) => {
    for (const ch of word) if (text[i++] !== ch) (i--, fail());
  };
  const string = () => {
    i++; // opening quote
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail();
      if (text[i] === "\\") {
        i++;
        if (text[i] === "u") {
          for (let k = 1; k <= 4; k++) if (!/[0-9a-fA-F]/.test(text[i + k] ?? "")) (i += k, fail());
          i += 5;
          continue;
        }
        if (!'"\\/bfnrt'.includes(text[i] ?? "x")) fail();
      }
      i++;
    }
    if (i >= text.length) fail();
    i++;
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) fail();
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ":") fail();
        i++;
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "}") return void i++;
        else fail();
      }
    }
    if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "]") return void i++;
        else fail();
      }
    }
    if (c === '"') return string();
    if (c === "t") return literal("true");
    if (c === "f") return literal("false");
    if (c === "n") return literal("null");
    number();
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
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
