/**
 * Unicode names (21): a name stored in one normalization form is found when requested in
 * another; an exact name always wins; two canonically equivalent names on disk and a
 * request matching neither exactly is AMBIGUOUS_PATH; look-alike dots never traverse.
 */
import assert from "node:assert/strict";
import { expectRefused, PATH_OPS, run, snapshot, withEnv } from "./_helpers.ts";

const NFC = "caf\u00e9.txt";
const NFD = "cafe\u0301.txt";

Deno.test("21. a file stored NFD is found when requested NFC (and the reverse)", async (t) => {
  await withEnv(async (env) => {
    const { ws, W } = env;
    await Deno.writeTextFile(`${W}/${NFD}`, "stored nfd\n");
    await Deno.mkdir(`${W}/re\u0301sume\u0301`);
    await Deno.writeTextFile(`${W}/re\u0301sume\u0301/notes.txt`, "notes\n");
    await Deno.writeTextFile(`${W}/na\u00efve.txt`, "stored nfc\n");
    await t.step("reads", async () => {
      const r = await run(ws, "read_file", { path: NFC });
      assert.equal(r.content, "stored nfd\n");
      assert.equal(r.path, NFD, "the result names the entry on disk");
      assert.equal((await run(ws, "read_file", { path: NFD })).content, "stored nfd\n");
      const info = await run(ws, "get_file_info", { path: NFC });
      assert.equal(info.path, NFD);
      const d = await run(ws, "read_file", { path: "r\u00e9sum\u00e9/notes.txt" });
      assert.equal(d.content, "notes\n");
      assert.equal(d.path, "re\u0301sume\u0301/notes.txt");
      const nfd = await run(ws, "read_file", { path: "nai\u0308ve.txt" });
      assert.equal(nfd.content, "stored nfc\n");
    });
    await t.step("writes go to the existing entry, never a second one", async () => {
      const w = await run(ws, "write_file", {
        path: NFC,
        content: "rewritten\n",
        ifExists: "overwrite",
        confirm: true,
      });
      assert.equal(w.path, NFD);
      assert.equal(w.created, false);
      await run(ws, "edit_file", { path: NFC, edits: [{ oldText: "rewritten", newText: "e" }] });
      const names: string[] = [];
      for await (const e of Deno.readDir(W)) names.push(e.name);
      assert.ok(names.includes(NFD));
      assert.ok(!names.includes(NFC));
      assert.equal(await Deno.readTextFile(`${W}/${NFD}`), "e\n");
    });
  });
});

Deno.test("21. when both forms exist, the exact name is used", async () => {
  await withEnv(async (env) => {
    const { ws, W } = env;
    await Deno.writeTextFile(`${W}/${NFC}`, "nfc\n");
    await Deno.writeTextFile(`${W}/${NFD}`, "nfd\n");
    assert.equal((await run(ws, "read_file", { path: NFC })).content, "nfc\n");
    assert.equal((await run(ws, "read_file", { path: NFD })).content, "nfd\n");
    await run(ws, "write_file", {
      path: NFD,
      content: "nfd2\n",
      ifExists: "overwrite",
      confirm: true,
    });
    assert.equal(await Deno.readTextFile(`${W}/${NFC}`), "nfc\n");
    assert.equal(await Deno.readTextFile(`${W}/${NFD}`), "nfd2\n");
  });
});

Deno.test("21. two equivalent names on disk and a third spelling is AMBIGUOUS_PATH everywhere", async (t) => {
  await withEnv(async (env) => {
    const { W } = env;
    // U+1EC7 (e with circumflex and dot below): NFC, NFD and a non-normalized third spelling.
    const nfc = "\u1ec7";
    const nfd = "e\u0323\u0302";
    const third = "\u00ea\u0323";
    assert.equal(third.normalize("NFC"), nfc);
    assert.notEqual(third, nfd);
    for (const n of [nfc, nfd]) {
      await Deno.writeTextFile(`${W}/${n}.txt`, `SECRET ${n}\n`);
      await Deno.mkdir(`${W}/dir-${n}`);
      await Deno.writeTextFile(`${W}/dir-${n}/f.txt`, `SECRET ${n}\n`);
    }
    for (const op of PATH_OPS) {
      await t.step(op.label, async () => {
        for (const p of [`${third}.txt`, `dir-${third}/f.txt`, `dir-${third}/new.txt`]) {
          const err = await expectRefused(env, op, p, "AMBIGUOUS_PATH");
          const candidates = (err.details?.candidates as string[] | undefined) ?? [];
          assert.equal(candidates.length, 2);
        }
      });
    }
  });
});

Deno.test("21. look-alike dots and a normalized name through a link never escape", async (t) => {
  await withEnv(async (env) => {
    const { ws, W, O } = env;
    const lookalikes = [
      "\uff0e\uff0e/outside/secret", // fullwidth full stops (only NFKC maps them to "..")
      "\u2024\u2024/outside/secret", // one dot leaders
      "\u2025/outside/secret", // two dot leader
      ".\u0338./outside/secret",
    ];
    for (const op of PATH_OPS.filter((o) => !o.write)) {
      await t.step(op.label, async () => {
        for (const p of lookalikes) await expectRefused(env, op, p, "NOT_FOUND");
      });
    }
    await t.step("writes land literally inside W", async () => {
      const before = await snapshot(O);
      const w = await run(ws, "write_file", {
        path: lookalikes[0],
        content: "x\n",
        createParents: true,
      });
      assert.equal(w.path, lookalikes[0]);
      assert.equal(await Deno.readTextFile(`${W}/${lookalikes[0]}`), "x\n");
      assert.deepEqual(await snapshot(O), before);
    });
    await t.step("an NFD-named link to O requested in NFC is still refused", async () => {
      await Deno.symlink(`${O}/secret`, `${W}/${NFD}`);
      for (const op of PATH_OPS.filter((o) => o.name !== "get_file_info" && o.write === false)) {
        await expectRefused(env, op, NFC, "OUTSIDE_WORKSPACE");
      }
      const info = await run(ws, "get_file_info", { path: NFC });
      assert.deepEqual(info.symlink, { status: "outside" });
    });
  });
});
