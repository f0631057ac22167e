/**
 * The engine's job table: one chunked function per operation. The worker module and the
 * Workspace (for inline runs) hand it to the engine; the pool itself imports no operation.
 */
import { searchJob } from "../search.ts";
import { findJob } from "../find.ts";
import { listJob } from "../list.ts";
import type { JobTable } from "./runner.ts";

/** search_text, find_files and list_directory's job functions. */
export const JOBS: JobTable = Object.freeze({
  search: searchJob,
  find: findJob,
  list: listJob,
});
