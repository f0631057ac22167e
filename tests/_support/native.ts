/**
 * The native search engine for tests: a real engine broker (src/launch/broker.ts starts it as a
 * child Deno with its own grants, exactly as the server launcher does) on one workspace root, and
 * the broker's client, counting what it answered, so a test can tell the native path really ran.
 */
import { type Broker, startBroker } from "../../src/launch/broker.ts";
import { NativeEngine } from "../../src/workspace/native/client.ts";
import type {
  EngineReport,
  PrefilterAnswer,
  PrefilterQuery,
  SearchPrefilter,
} from "../../src/workspace/native/prefilter.ts";

/**
 * The broker directory a test uses: the one its shard's permissions name (scripts/test.ts,
 * WMCP_TEST_ENGINE_DIR), or a fresh one when the file runs on its own with every permission.
 */
export function testEngineDir(): string | undefined {
  return Deno.env.get("WMCP_TEST_ENGINE_DIR");
}

/** Whether this machine can run the native engine (bwrap and rg installed). */
export async function nativeAvailable(): Promise<boolean> {
  const has = async (p: string) => await Deno.stat(p).then((s) => s.isFile, () => false);
  return (await has("/usr/bin/rg") || await has("/usr/local/bin/rg")) &&
    (await has("/usr/bin/bwrap"));
}

/** A running broker and its client, with what the client answered. */
export interface TestNative extends SearchPrefilter {
  broker: Broker;
  /** Answers that named files (the search read only those). */
  answered: number;
  /** Files whose candidate lines came in an answer (scanned without being read; decision 0067). */
  linesFiles: number;
  /** Queries that could not be prefiltered (accepts false) or fell back (null). */
  unfiltered: number;
  /** Fallback reasons the client reported. */
  fallbacks: string[];
  close(): Promise<void>;
}

/**
 * Starts a broker on `root` and connects a client; throws when the native engine cannot run.
 * `hedgeMs` 0 (the default here) makes every read of a search wait for the prefilter's answer,
 * so what the search reads is decided by the answer alone.
 */
export async function startNative(root: string, hedgeMs = 0): Promise<TestNative> {
  const started = await startBroker(root, { dir: testEngineDir() });
  if ("reason" in started) throw new Error(`no native engine here: ${started.reason}`);
  const fallbacks: string[] = [];
  const client = new NativeEngine({
    socket: started.socket,
    token: started.token,
    onFallback: (why) => fallbacks.push(why),
  });
  const t: TestNative = {
    broker: started,
    hedgeMs,
    answered: 0,
    linesFiles: 0,
    unfiltered: 0,
    fallbacks,
    accepts(q: PrefilterQuery): boolean {
      const yes = client.accepts(q);
      if (!yes) t.unfiltered++;
      return yes;
    },
    async files(q: PrefilterQuery, signal?: AbortSignal): Promise<PrefilterAnswer | null> {
      const a = await client.files(q, signal);
      if (a === null) t.unfiltered++;
      else {
        t.answered++;
        t.linesFiles += a.lines?.size ?? 0;
      }
      return a;
    },
    report: (): Promise<EngineReport> => client.report(),
    async close() {
      client.close();
      await started.stop();
    },
  };
  return t;
}
