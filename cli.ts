/** wmcp command line: `op list`, `op NAME ...` (see --help). */
import { main } from "./src/cli/main.ts";

if (import.meta.main) {
  Deno.exitCode = await main(Deno.args);
}
