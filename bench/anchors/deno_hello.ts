/** Benchmark anchor: a raw Deno.serve hello-world (127.0.0.1, port from argv or 0); prints a ready line. */
Deno.serve({
  hostname: "127.0.0.1",
  port: Number(Deno.args[0] ?? 0),
  onListen: ({ port }) =>
    console.log(
      JSON.stringify({ event: "ready", url: `http://127.0.0.1:${port}/`, pid: Deno.pid }),
    ),
}, () => new Response("Hello, World!"));
