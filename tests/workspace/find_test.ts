/** find_files: glob semantics, exclude pruning, .gitignore, hidden names, caps. */
import assert from "node:assert/strict";
import { makeTree, openWorkspace, run, runError, withTempDir } from "./_helpers.ts";

const TREE = {
  "top.ts": "",
  "README.md": "",
  "src/a.ts": "",
  "src/a.test.ts": "",
  "src/lib/b.ts": "",
  "src/lib/c.js": "",
  "src/lib/deep/d.ts": "",
  "test/t.ts": "",
  "docs/guide.md": "",
  "docs/deep/x.md": "",
  "build/out.ts": "",
  "node_modules/pkg/index.ts": "",
  "logs/a.log": "",
  "logs/keep.log": "",
  "logs/sub/b.log": "",
  "sub/secret.txt": "",
  "secret.txt": "",
  ".hidden.ts": "",
  ".config/settings.ts": "",
  ".git/HEAD": "ref: refs/heads/main\n",
  ".git/hooks/pre.ts": "",
  ".gitignore": "build/\nnode_modules/\n",
  "logs/.gitignore": "*.log\n!keep.log\n",
  "sub/.gitignore": "secret.txt\n",
};

async function setup(dir: string) {
  await makeTree(dir, TREE);
  return await openWorkspace(dir);
}

const paths = (r: { matches: { path: string }[] }) => r.matches.map((m) => m.path);

Deno.test("find_files: **/*.ts from the root (gitignored, hidden and .git left out)", async () => {
  await withTempDir(async (dir) => {
    const ws = await setup(dir);
    const r = await run(ws, "find_files", { pattern: "**/*.ts" });
    assert.deepStrictEqual(paths(r), [
      "src/a.test.ts",
      "src/a.ts",
      "src/lib/b.ts",
      "src/lib/deep/d.ts",
      "test/t.ts",
      "top.ts",
    ]);
    assert.ok(r.matches.every((m) => m.type === "file"));
    assert.equal(r.path, ".");
    assert.equal(r.truncated, false);
    assert.equal(r.truncatedReason, undefined);
    assert.ok(r.visited > r.matches.length);
  });
});

Deno.test("find_files: patterns are relative to path", async () => {
  await withTempDir(async (dir) => {
    const ws = await setup(dir);
    assert.deepStrictEqual(paths(await run(ws, "find_files", { pattern: "src/**/*.ts" })), [
      "src/a.test.ts",
      "src/a.ts",
      "src/lib/b.ts",
      "src/lib/deep/d.ts",
    ]);
    assert.deepStrictEqual(paths(await run(ws, "find_files", { pattern: "src/*.ts" })), [
      "src/a.test.ts",
      "src/a.ts",
    ]);
    const inSrc = await run(ws, "find_files", { pattern: "**/*.ts", path: "src" });
    assert.equal(inSrc.path, "src");
    assert.deepStrictEqual(paths(inSrc), [
      "src/a.test.ts",
      "src/a.ts",
      "src/lib/b.ts",
      "src/lib/deep/d.ts",
    ]);
    // Relative to src, "src/..." does not match.
    assert.deepStrictEqual(
      paths(await run(ws, "find_files", { pattern: "src/**/*.ts", path: "src" })),
      [],
    );
    assert.deepStrictEqual(
      paths(await run(ws, "find_files", { pattern: "lib/*.ts", path: "src" })),
      ["src/lib/b.ts"],
    );
    assert.deepStrictEqual(
      paths(await run(ws, "find_files", { pattern: "lib/**", path: "src" })),
      // "dir/**" also matches "dir" itself (as picomatch did).
      ["src/lib", "src/lib/b.ts", "src/lib/c.js", "src/lib/deep", "src/lib/deep/d.ts"],
    );
    // Brace and extglob-style alternatives.
    assert.deepStrictEqual(
      paths(await run(ws, "find_files", { pattern: "src/lib/*.{js,ts}" })),
      ["src/lib/b.ts", "src/lib/c.js"],
    );
  });
});

Deno.test("find_files: a pattern without '/' matches the base name at any depth", async () => {
  await withTempDir(async (dir) => {
    const ws = await setup(dir);
    assert.deepStrictEqual(paths(await run(ws, "find_files", { pattern: "*.md" })), [
      "README.md",
      "docs/deep/x.md",
      "docs/guide.md",
    ]);
    // Directories match too, with their type.
    const r = await run(ws, "find_files", { pattern: "deep" });
    assert.deepStrictEqual(r.matches, [
      { path: "docs/deep", type: "directory" },
      { path: "src/lib/deep", type: "directory" },
    ]);
    assert.deepStrictEqual(paths(await run(ws, "find_files", { pattern: "*.test.ts" })), [
      "src/a.test.ts",
    ]);
  });
});

Deno.test("find_files: exclude prunes directories", async () => {
  await withTempDir(async (dir) => {
    const ws = await setup(dir);
    const all = await run(ws, "find_files", { pattern: "*.md" });
    const r = await run(ws, "find_files", { pattern: "*.md", exclude: ["docs/deep"] });
    assert.deepStrictEqual(paths(r), ["README.md", "docs/guide.md"]);
    // The excluded directory is visited (and refused) but nothing below it is.
    assert.equal(r.visited, all.visited - 1);
    // A base-name exclude prunes at any depth.
    const r2 = await run(ws, "find_files", { pattern: "*.ts", exclude: ["deep", "test"] });
    assert.deepStrictEqual(paths(r2), ["src/a.test.ts", "src/a.ts", "src/lib/b.ts", "top.ts"]);
    // A file exclude.
    const r3 = await run(ws, "find_files", {
      pattern: "*.ts",
      exclude: ["*.test.ts", "src/lib/**"],
    });
    assert.deepStrictEqual(paths(r3), ["src/a.ts", "test/t.ts", "top.ts"]);
    await runError(
      ws,
      "find_files",
      { pattern: "*.ts", exclude: [""] },
      "INVALID_ARGUMENT",
      "exclude[0]",
    );
  });
});

Deno.test("find_files: .gitignore at the root and nested, with negation", async () => {
  await withTempDir(async (dir) => {
    const ws = await setup(dir);
    assert.deepStrictEqual(paths(await run(ws, "find_files", { pattern: "*.log" })), [
      "logs/keep.log",
    ]);
    // sub/.gitignore applies below sub only.
    assert.deepStrictEqual(paths(await run(ws, "find_files", { pattern: "secret.txt" })), [
      "secret.txt",
    ]);
    // Ignored directories are not entered.
    assert.deepStrictEqual(paths(await run(ws, "find_files", { pattern: "index.ts" })), []);
    assert.deepStrictEqual(paths(await run(ws, "find_files", { pattern: "build" })), []);
    // .gitignore files above the starting directory still apply.
    assert.deepStrictEqual(
      paths(await run(ws, "find_files", { pattern: "*", path: "logs" })),
      ["logs/keep.log", "logs/sub"],
    );
    assert.deepStrictEqual(
      paths(await run(ws, "find_files", { pattern: "*", path: "logs/sub" })),
      [],
    );
  });
});

Deno.test("find_files: a root .gitignore negated by a nested one", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, {
      ".gitignore": "*.log\n",
      "a.log": "",
      "logs/b.log": "",
      "logs/keep.log": "",
      "logs/.gitignore": "!keep.log\n",
    });
    const ws = await openWorkspace(dir);
    assert.deepStrictEqual(paths(await run(ws, "find_files", { pattern: "*.log" })), [
      "logs/keep.log",
    ]);
  });
});

Deno.test("find_files: respectGitignore false, .git and hidden names", async () => {
  await withTempDir(async (dir) => {
    const ws = await setup(dir);
    assert.deepStrictEqual(
      paths(await run(ws, "find_files", { pattern: "**/*.ts", respectGitignore: false })),
      [
        "build/out.ts",
        "node_modules/pkg/index.ts",
        "src/a.test.ts",
        "src/a.ts",
        "src/lib/b.ts",
        "src/lib/deep/d.ts",
        "test/t.ts",
        "top.ts",
      ],
    );
    assert.deepStrictEqual(
      paths(await run(ws, "find_files", { pattern: "*.log", respectGitignore: false })),
      ["logs/a.log", "logs/keep.log", "logs/sub/b.log"],
    );
    // includeHidden: hidden names appear, .git is still skipped while .gitignore is respected.
    assert.deepStrictEqual(
      paths(await run(ws, "find_files", { pattern: "*.ts", includeHidden: true })),
      [
        ".config/settings.ts",
        ".hidden.ts",
        "src/a.test.ts",
        "src/a.ts",
        "src/lib/b.ts",
        "src/lib/deep/d.ts",
        "test/t.ts",
        "top.ts",
      ],
    );
    assert.deepStrictEqual(
      paths(await run(ws, "find_files", { pattern: "HEAD", includeHidden: true })),
      [],
    );
    // Both off: .git is walked like any directory.
    assert.deepStrictEqual(
      paths(
        await run(ws, "find_files", {
          pattern: "*.ts",
          includeHidden: true,
          respectGitignore: false,
          path: ".git",
        }),
      ),
      [".git/hooks/pre.ts"],
    );
    assert.deepStrictEqual(
      paths(await run(ws, "find_files", { pattern: ".gitignore", includeHidden: true })),
      [".gitignore", "logs/.gitignore", "sub/.gitignore"],
    );
  });
});

Deno.test("find_files: maxResults truncation", async () => {
  await withTempDir(async (dir) => {
    const ws = await setup(dir);
    const r = await run(ws, "find_files", { pattern: "**/*.ts", maxResults: 2 });
    assert.deepStrictEqual(paths(r), ["src/a.test.ts", "src/a.ts"]);
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedReason, "maxResults");
    // Exactly as many matches as maxResults: not truncated.
    const exact = await run(ws, "find_files", { pattern: "*.md", maxResults: 3 });
    assert.equal(exact.matches.length, 3);
    assert.equal(exact.truncated, false);
    assert.equal(exact.truncatedReason, undefined);
    const limited = await openWorkspace(dir, { limits: { maxResults: 2 } });
    const e = await runError(
      limited,
      "find_files",
      { pattern: "*", maxResults: 3 },
      "INVALID_ARGUMENT",
      "maxResults",
    );
    assert.deepStrictEqual(e.details, { limit: 2 });
    const def = await run(limited, "find_files", { pattern: "*.ts" });
    assert.equal(def.matches.length, 2);
    assert.equal(def.truncatedReason, "maxResults");
  });
});

Deno.test("find_files: the maxVisited cap is reported", async () => {
  await withTempDir(async (dir) => {
    await makeTree(dir, TREE);
    const ws = await openWorkspace(dir, { limits: { maxVisited: 5 } });
    const r = await run(ws, "find_files", { pattern: "**" });
    assert.equal(r.visited, 5);
    assert.equal(r.truncated, true);
    assert.equal(r.truncatedReason, "maxVisited");
    assert.equal(r.matches.length, 5);
  });
});

Deno.test("find_files: errors", async () => {
  await withTempDir(async (dir) => {
    const ws = await setup(dir);
    await runError(ws, "find_files", { pattern: "" }, "INVALID_ARGUMENT", "pattern");
    await runError(ws, "find_files", { pattern: "*", path: "top.ts" }, "NOT_A_DIRECTORY", "path");
    await runError(ws, "find_files", { pattern: "*", path: "nope" }, "NOT_FOUND", "path");
    await runError(ws, "find_files", {}, "INVALID_ARGUMENT", "pattern");
  });
});
