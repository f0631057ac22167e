/** Entry of the adapters' separately bundled engine worker (dist/engine_worker.js). */
import "../src/workspace/engine/worker.ts";
