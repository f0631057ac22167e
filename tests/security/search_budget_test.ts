/**
 * The result byte budget (issue 8, section 3) for search_text, find_files and
 * list_directory: a small request that would have returned many MiB stays under
 * maxResultBytes and says truncatedReason "maxResultBytes"; a list page cut by the budget
 * continues through its cursor.
 */
import assert from "node:assert/strict";
import { withTempDir } from "../_support/fs.ts";
import { runOperation, Workspace } from "../../mod.ts";
import { DEFAULT_LIMITS } from "../../src/workspace/limits.ts";

/** Runs fn in a fresh temporary root, removed afterwards. */
const withRoot = (fn: (root: string) => Promise<void>) =>
  withTempDir(fn, { prefix: "wmcp-budget-" });

const bytesOf = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).length;

Deno.test("search_text: one small request over big lines stays under maxResultBytes", async () => {
  await withRoot(async (root) => {
    // Lines of 3,000 two-byte characters: every match carries 21 clipped lines of context.
    const line = "é".repeat(3000) + "\n";
    for (let f = 0; f < 4; f++) await Deno.writeTextFile(`${root}/f${f}.txt`, line.repeat(200));
    const ws = await Workspace.open({ root, limits: { maxMatches: 100_000 } });
    const args = { query: ".", regex: true, contextLines: 10, maxMatches: 100_000 };
    assert.ok(JSON.stringify(args).length < 400);
    const r = await runOperation({ workspace: ws }, "search_text", args) as {
      matches: unknown[];
      truncated: boolean;
      truncatedReason?: string;
    };
    const size = bytesOf(r);
    console.log(
      `search_text: ${r.matches.length} matches, ${size} bytes (limit ${DEFAULT_LIMITS.maxResultBytes})`,
    );
    assert.ok(size <= DEFAULT_LIMITS.maxResultBytes, `${size} bytes`);
    assert.ok(r.matches.length > 0);
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedReason, "maxResultBytes");
    // Without the budget this answer would be 800 matches * 21 lines * ~2 KB = ~34 MB.
    assert.ok(r.matches.length < 800);
  });
});

Deno.test("find_files and list_directory stop at maxResultBytes; the list page's cursor continues", async () => {
  await withRoot(async (root) => {
    const long = "n".repeat(200);
    for (let i = 0; i < 100; i++) {
      await Deno.writeTextFile(`${root}/${long}${String(i).padStart(3, "0")}`, "");
    }
    const ws = await Workspace.open({ root, limits: { maxResultBytes: 8 * 1024 } });
    const found = await runOperation({ workspace: ws }, "find_files", { pattern: "*" }) as {
      matches: { path: string }[];
      truncated: boolean;
      truncatedReason?: string;
    };
    assert.ok(bytesOf(found) <= 8 * 1024, `${bytesOf(found)} bytes`);
    assert.ok(found.matches.length > 0 && found.matches.length < 100);
    assert.equal(found.truncatedReason, "maxResultBytes");

    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const r = await runOperation(
        { workspace: ws },
        "list_directory",
        cursor === undefined ? {} : { cursor },
      ) as {
        entries: { path: string }[];
        total: number;
        nextCursor?: string;
        truncated: boolean;
        truncatedReason?: string;
      };
      assert.ok(bytesOf(r) <= 8 * 1024, `${bytesOf(r)} bytes`);
      assert.equal(r.total, 100);
      seen.push(...r.entries.map((e) => e.path));
      if (r.nextCursor === undefined) break;
      assert.equal(r.truncatedReason, "maxResultBytes");
      cursor = r.nextCursor;
    }
    // Every entry exactly once, in order, across the pages the budget cut.
    assert.deepEqual(seen, [...seen].sort());
    assert.equal(new Set(seen).size, 100);
  });
});
