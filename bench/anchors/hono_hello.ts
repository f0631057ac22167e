/** Benchmark anchor: a hono hello-world on Deno.serve (127.0.0.1, port from argv or 0); prints a ready line. */
import { Hono } from "hono";

const app = new Hono();
app.all("*", (c) => c.text("Hello, World!"));

Deno.serve({
  hostname: "127.0.0.1",
  port: Number(Deno.args[0] ?? 0),
  onListen: ({ port }) =>
    console.log(
      JSON.stringify({ event: "ready", url: `http://127.0.0.1:${port}/`, pid: Deno.pid }),
    ),
}, app.fetch);
