/**
 * Shared test support: temp dirs and trees, snapshots, the typed-error check, bounded
 * concurrency, waits on events, the CLI runner and the in-process HTTP handler. Suites import
 * from here instead of keeping their own copies; suite-specific fixtures stay in each suite's
 * `_helpers.ts`.
 */
export * from "./cli.ts";
export * from "./errors.ts";
export * from "./fs.ts";
export * from "./handler.ts";
export * from "./pool.ts";
export * from "./wait.ts";
