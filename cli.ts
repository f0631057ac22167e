/** wmcp command line: `op list`, `op NAME ...` (see --help). */
import { main } from "./src/cli/main.ts";

if (import.meta.main) {
  // Exit explicitly: an SDK client can leave handles open after close (see RUNTIME.md).
  Deno.exit(await main(Deno.args));
}
