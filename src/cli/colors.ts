/**
 * Whether the CLI's output for people is coloured, and the few styles it uses. The decision is
 * ours (NO_COLOR, FORCE_COLOR, TERM=dumb, is the stream a terminal); ansi-styles supplies only
 * the escape codes (it reads no environment, so it needs no --allow-env).
 */
import { streams } from "../std_streams.ts";
import styles from "ansi-styles";
import { envIfGranted } from "../config.ts";

/** The environment variables that decide colour (read only when granted; else unset). */
export interface ColorEnv {
  NO_COLOR?: string;
  FORCE_COLOR?: string;
  TERM?: string;
}

/**
 * The colour environment of this process. A NO_COLOR this process may not read might be set, so
 * it counts as set (no colour without the grant); FORCE_COLOR and TERM unreadable count as unset.
 */
export function colorEnv(): ColorEnv {
  const get = (name: string) => {
    try {
      return envIfGranted(name);
    } catch {
      return undefined;
    }
  };
  let noColorReadable = false;
  try {
    noColorReadable =
      Deno.permissions.querySync({ name: "env", variable: "NO_COLOR" }).state === "granted";
  } catch {
    // no permission API: as unreadable
  }
  if (!noColorReadable) return { NO_COLOR: "(not readable)" };
  return { NO_COLOR: get("NO_COLOR"), FORCE_COLOR: get("FORCE_COLOR"), TERM: get("TERM") };
}

/**
 * Colour or not, in this order: NO_COLOR set to anything non-empty: never (https://no-color.org);
 * FORCE_COLOR `0` or `false`: never; FORCE_COLOR set otherwise (non-empty): always, even when
 * the stream is not a terminal; TERM=dumb: never; else when the stream is a terminal.
 */
export function useColor(isTerminal: boolean, env: ColorEnv = colorEnv()): boolean {
  if ((env.NO_COLOR ?? "") !== "") return false;
  const force = env.FORCE_COLOR ?? "";
  if (force === "0" || force === "false") return false;
  if (force !== "") return true;
  if (env.TERM === "dumb") return false;
  return isTerminal;
}

/** Whether stdout output is coloured (see useColor). */
export function stdoutColor(): boolean {
  return useColor(streams().stdout.isTerminal());
}

/** Whether stderr output is coloured (see useColor). */
export function stderrColor(): boolean {
  return useColor(streams().stderr.isTerminal());
}

/** One style: wraps text in its codes, or returns it as is when colour is off. */
export type Style = (text: string) => string;

/** The styles the renderers use. */
export interface Palette {
  enabled: boolean;
  dim: Style;
  bold: Style;
  red: Style;
  green: Style;
  yellow: Style;
  blue: Style;
  magenta: Style;
  cyan: Style;
  /** The highlighted part of a search hit. */
  match: Style;
}

/** The palette for `enabled` (every style the identity when false). */
export function palette(enabled: boolean): Palette {
  const wrap = (s: { open: string; close: string }): Style =>
    enabled ? (t) => (t === "" ? t : s.open + t + s.close) : (t) => t;
  return {
    enabled,
    dim: wrap(styles.dim),
    bold: wrap(styles.bold),
    red: wrap(styles.red),
    green: wrap(styles.green),
    yellow: wrap(styles.yellow),
    blue: wrap(styles.blue),
    magenta: wrap(styles.magenta),
    cyan: wrap(styles.cyan),
    match: enabled
      ? (t) => (t === "" ? t : styles.bold.open + styles.red.open + t + styles.red.close +
        styles.bold.close)
      : (t) => t,
  };
}
