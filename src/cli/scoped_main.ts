/** The entry the router (router.ts) runs a command's work in, under that command's permissions. */
import { main } from "./main.ts";

if (import.meta.main) {
  // Exit explicitly: an SDK client can leave handles open after close (see RUNTIME.md).
  Deno.exit(await main(Deno.args));
}
