/** The types of json_checks.js, the generated checks (scripts/json_checks.ts writes it). */

/** A generated check: whether a value is valid against one JSON Schema. */
export type GeneratedCheck = (value: unknown) => boolean;

/** The defaults an input schema declares, over properties and array items. */
export interface GeneratedDefaults {
  /** Values of the properties that default when absent (or undefined). */
  set?: Record<string, unknown>;
  /** The defaults inside properties. */
  props?: Record<string, GeneratedDefaults>;
  /** The defaults inside every item of an array. */
  items?: GeneratedDefaults;
}

/** One operation's checks. */
export interface OperationChecks {
  /** The input schema's check (top-level zod refinements are not in it). */
  input: GeneratedCheck;
  /** The check of the tool's structuredContent (the output less content-only fields). */
  output: GeneratedCheck;
  /** The input schema's defaults, or null when it declares none. */
  defaults: GeneratedDefaults | null;
}

/** Every registry operation's checks by name. */
export declare const CHECKS: Readonly<Record<string, OperationChecks>>;
