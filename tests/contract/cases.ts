/**
 * THE contract table: every row is run through all five adapters (library, CLI, stdio
 * server, HTTP modern, HTTP legacy) by contract_test.ts, each on a fresh copy of its
 * fixture, and must mean the same everywhere: the same structured result (after
 * normalising timestamps, cursors and directory sizes), the same error code, argument
 * and details, and the same files on disk afterwards.
 *
 * Paths in `args` go through `p` (case-relative, prefixed for shared-root servers), `p.abs`
 * or, with two roots, `p.second` (absolute, in the second root); literal paths ("." ,
 * "../outside/...", "/etc/passwd") are workspace-relative on purpose (the workspace root, or an
 * escape from it).
 *
 * The rows live in tests/contract/cases/, one file per section; cases_count_test.ts pins
 * their number.
 */
import type { Case } from "./_model.ts";
import { READ_CASES } from "./cases/read.ts";
import { WRITE_CASES } from "./cases/write.ts";
import { INVALID_ARGUMENT_CASES } from "./cases/invalid_argument.ts";
import { CONTAINMENT_CASES } from "./cases/containment.ts";
import { TYPED_ERROR_CASES } from "./cases/typed_errors.ts";
import { READ_ONLY_CASES } from "./cases/read_only.ts";
import { ROOTS_CASES } from "./cases/roots.ts";

/** The whole table, section by section (tests/contract/cases/), in its historical order. */
export const CASES: Case[] = [
  ...READ_CASES,
  ...WRITE_CASES,
  ...INVALID_ARGUMENT_CASES,
  ...CONTAINMENT_CASES,
  ...TYPED_ERROR_CASES,
  ...READ_ONLY_CASES,
  ...ROOTS_CASES,
];
