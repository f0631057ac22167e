/**
 * Child entry of the launcher's pid-directory check (src/sandbox/pid_dir.ts): prints `{"real": REALPATH, "entries": [NAMES]}` for it, or
 * `{"error": MESSAGE}`. The launcher itself holds no read permission.
 */
if (import.meta.main) {
  const dir = Deno.args[0];
  try {
    const real = Deno.realPathSync(dir);
    const entries = [...Deno.readDirSync(real)].map((e) => e.name).sort();
    console.log(JSON.stringify({ real, entries }));
  } catch (err) {
    console.log(JSON.stringify({ error: (err as Error).message }));
  }
}
