/**
 * Writes while another process swaps a parent directory with a symlink to an outside directory
 * (tests/security/_swapper.py: renameat2 RENAME_EXCHANGE in a tight loop). Without the kernel
 * sandbox the in-process layer cannot make this impossible (the kernel walks the absolute path
 * again at every system call, and Deno has no openat/renameat): what this suite asserts is that
 * every failure is a typed error. How many attempts still changed the outside directory, and
 * whether the call said so, is measured and printed, not asserted (see
 * docs/decisions/0010-containment-in-process.md for the window).
 */
import assert from "node:assert/strict";
import { runOperation, WorkspaceError } from "../../mod.ts";
import { snapshot, withEnv, withTimeout } from "./_helpers.ts";

const SWAPPER = new URL("./_swapper.py", import.meta.url).pathname;
/** Attempts per operation kind. */
const ATTEMPTS = 40;

interface Tally {
  ok: number;
  codes: Record<string, number>;
  /** Attempts after which the outside directory had changed, and the call said so. */
  reportedEscapes: number;
  /** Attempts after which the outside directory had changed, and the call succeeded. */
  silentEscapes: number;
  /** What changed outside, per escape. */
  changes: string[];
}

/** Starts the swapper and waits for its "ready". */
async function startSwapper(a: string, b: string) {
  const child = new Deno.Command("python3", {
    args: [SWAPPER, a, b, "120"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  while (!buf.includes("ready")) {
    const { done, value } = await withTimeout(reader.read(), 10_000, "swapper ready");
    if (done) throw new Error("the swapper exited before it was ready");
    buf += value;
  }
  return {
    async stop(): Promise<number> {
      await child.stdin.close();
      let rest = buf;
      while (true) {
        const { done, value } = await withTimeout(reader.read(), 10_000, "swapper stop");
        if (done) break;
        rest += value;
      }
      await child.stderr.cancel();
      await child.status;
      return Number(rest.trim().split("\n").pop());
    },
  };
}

Deno.test("writes under a parent swapped with an outside link: typed failures; outside changes measured", async () => {
  await withEnv(async (env) => {
    const { W, O } = env;
    // p: a real directory in W; plink: a link to O. The swapper exchanges them.
    await Deno.mkdir(`${W}/p`);
    await Deno.symlink(O, `${W}/plink`);
    const seed = async (dir: string, text: string) => {
      await Deno.writeTextFile(`${dir}/f.txt`, `edit-me ${text}\n`);
      for (let i = 0; i < ATTEMPTS; i++) {
        await Deno.writeTextFile(`${dir}/m${i}.txt`, `${text} m${i}\n`);
        await Deno.mkdir(`${dir}/tree${i}/sub`, { recursive: true });
        await Deno.writeTextFile(`${dir}/tree${i}/sub/leaf.txt`, `${text} leaf\n`);
        await Deno.writeTextFile(`${dir}/tree${i}/top.txt`, `${text} top\n`);
      }
    };
    await seed(`${W}/p`, "inside");
    await seed(O, "OUTSIDE");
    await Deno.writeTextFile(`${W}/src.txt`, "source\n");

    const kinds: [string, (i: number) => [string, Record<string, unknown>]][] = [
      ["write_file(create)", (i) => ["write_file", { path: `p/new${i}.txt`, content: "pwned\n" }]],
      ["write_file(overwrite)", () => [
        "write_file",
        { path: "p/f.txt", content: "edit-me pwned\n", ifExists: "overwrite", confirm: true },
      ]],
      ["edit_file", () => [
        "edit_file",
        { path: "p/f.txt", edits: [{ oldText: "edit-me", newText: "edit-me" + "!" }] },
      ]],
      ["create_directory", (i) => ["create_directory", { path: `p/nd${i}/x` }]],
      [
        "move_path(out of p)",
        (i) => ["move_path", { source: `p/m${i}.txt`, destination: `got${i}.txt` }],
      ],
      ["move_path(into p, overwrite)", (i) => [
        "move_path",
        { source: "src.txt", destination: `p/m${i}.txt`, overwrite: true, confirm: true },
      ]],
      [
        "copy_path(tree out of p)",
        (i) => ["copy_path", { source: `p/tree${i}`, destination: `cp${i}`, recursive: true }],
      ],
      ["copy_path(into p, overwrite)", (i) => [
        "copy_path",
        { source: "src.txt", destination: `p/m${i}.txt`, overwrite: true },
      ]],
      [
        "delete_path(recursive)",
        (i) => ["delete_path", { path: `p/tree${i}`, recursive: true, confirm: true }],
      ],
    ];
    const tallies: Record<string, Tally> = {};
    const swapper = await startSwapper(`${W}/p`, `${W}/plink`);
    let swaps = 0;
    try {
      // Nothing but the attempts changes O: each attempt's snapshot after is the next one's before.
      let before = await snapshot(O);
      for (const [label, make] of kinds) {
        const t: Tally = { ok: 0, codes: {}, reportedEscapes: 0, silentEscapes: 0, changes: [] };
        tallies[label] = t;
        for (let i = 0; i < ATTEMPTS; i++) {
          if (label.startsWith("move_path(into") || label.startsWith("copy_path(into")) {
            await Deno.writeTextFile(`${W}/src.txt`, "source\n");
          }
          const [name, args] = make(i);
          let error: WorkspaceError | null = null;
          try {
            await withTimeout(runOperation({ workspace: env.ws }, name, args), 10_000, label);
            t.ok++;
          } catch (err) {
            assert.ok(
              err instanceof WorkspaceError,
              `${label} #${i}: an untyped failure: ${err}`,
            );
            assert.notEqual(err.code, "IO_ERROR", `${label} #${i}: ${err.message}`);
            assert.ok(
              !err.message.includes(O),
              `${label} #${i}: the error names O: ${err.message}`,
            );
            error = err;
            t.codes[err.code] = (t.codes[err.code] ?? 0) + 1;
          }
          const after = await snapshot(O);
          if (JSON.stringify(after) !== JSON.stringify(before)) {
            const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
            const diff = [...keys].filter((k) =>
              k !== "." && JSON.stringify(before[k]) !== JSON.stringify(after[k])
            ).map((k) => `${k in before ? (k in after ? "changed" : "removed") : "created"} ${k}`);
            t.changes.push(`${error?.code ?? "ok"}: ${diff.join(", ")}`);
            if (error?.code === "CHANGED_DURING_OPERATION") t.reportedEscapes++;
            else t.silentEscapes++;
          }
          before = after;
        }
      }
    } finally {
      swaps = await swapper.stop();
    }
    console.error(
      `write races over ${swaps} swaps, ${ATTEMPTS} attempts each: ${JSON.stringify(tallies)}`,
    );
    assert.ok(swaps > 0, "the swapper did not swap");
    // What the in-process layer guarantees here: typed failures (asserted above) and every
    // attempt accounted for. Outside changes are measured and printed, not asserted: a swap
    // inside the kernel's look-ups of one rename can beat any check by path (decision 0010).
    for (const [label, t] of Object.entries(tallies)) {
      assert.equal(
        t.ok + Object.values(t.codes).reduce((a, b) => a + b, 0),
        ATTEMPTS,
        `${label}: every attempt was counted`,
      );
    }
    // Measured, not asserted (the window of decision 0010): outside changes other than an empty
    // random-named temporary entry (a named file or directory created, replaced or removed).
    const all = Object.values(tallies).flatMap((t) => t.changes);
    const named = all.filter((c) =>
      c.replace(/^[A-Z_]+: /, "").split(", ").some((d) =>
        d !== "" && !d.startsWith("created .wmcp-tmp-")
      )
    );
    const tempsLeft = Object.keys(await snapshot(O)).filter((n) => n.includes(".wmcp-tmp-"));
    const silent = Object.values(tallies).reduce((a, t) => a + t.silentEscapes, 0);
    console.error(
      `outside changes: ${all.length} (${silent} reported as success), of which named: ` +
        `${named.length} ${
          JSON.stringify(named)
        }; temporary entries left outside: ${tempsLeft.length}`,
    );
  });
});

Deno.test("a workspace root replaced after open is refused for reads and writes", async (t) => {
  for (const how of ["a symlink to O", "another directory"]) {
    await t.step(how, async () => {
      await withEnv(async (env) => {
        const { W, O } = env;
        await Deno.rename(W, `${W}.orig`);
        if (how === "a symlink to O") await Deno.symlink(O, W);
        else {
          await Deno.mkdir(W);
          await Deno.writeTextFile(`${W}/inside.txt`, "impostor\n");
        }
        const before = await snapshot(env.base);
        for (
          const [name, args] of [
            ["read_file", { path: "secret" }],
            ["read_file", { path: "inside.txt" }],
            ["list_directory", { path: "." }],
            ["search_text", { query: "SECRET", path: "." }],
            ["find_files", { pattern: "**" }],
            ["write_file", { path: "new.txt", content: "pwned\n" }],
            ["create_directory", { path: "nd" }],
            ["delete_path", { path: "inside.txt", confirm: true }],
          ] as const
        ) {
          await assert.rejects(
            runOperation({ workspace: env.ws }, name, args),
            (e) =>
              e instanceof WorkspaceError && e.code === "CHANGED_DURING_OPERATION" &&
              e.details?.reason === "root-replaced",
            `${how}: ${name}`,
          );
        }
        assert.deepEqual(await snapshot(env.base), before, "something changed");
      });
    });
  }
});
