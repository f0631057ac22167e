/**
 * search_text benchmark: wmcp (in-process library and CLI child process) against ripgrep and
 * GNU grep on a generated, deterministic tree (about 24,000 files, about 250 MB).
 *
 * Run with `deno task bench`; see bench/README.md for what is measured and how to read it.
 *
 * Environment knobs (all optional):
 *   BENCH_ROUNDS=N       timed rounds per tool and query (default 5, at least 1)
 *   BENCH_REGENERATE=1   throw the cached tree away and generate it again
 *   BENCH_NO_INSTALL=1   do not try `apt-get install ripgrep` when rg is missing
 */
import { runOperation, Workspace } from "../mod.ts";
import { startBroker } from "../src/launch/broker.ts";
import { NativeEngine } from "../src/workspace/native/client.ts";

// ---------------------------------------------------------------------------------------------
// Configuration

/** Bump whenever the generated tree or the expected counts would change. */
export const GENERATOR_VERSION = 2;
const SEED = 0x5eed2024;
const TARGET_FILES = 24_000;
const MIN_FILES = 20_000;
const MIN_BYTES = 200 * 1024 * 1024;
/** wmcp's default maxSearchFileBytes; no generated file may reach it. */
const SEARCH_FILE_CAP = 4 * 1024 * 1024;
/** The limits wmcp runs with here, so that it reports every match and skips no file. */
export const WMCP_LIMITS = {
  maxMatches: 1_000_000,
  maxSearchFileBytes: 64 * 1024 * 1024,
  maxResultBytes: 1024 * 1024 * 1024,
};
const LARGE_FILES = 12;
const BINARY_FILES = 8;
export const NEEDLE = "wmcp_needle_7f3a";
const NEEDLE_FILES = 43;

export const BENCH_DIR = import.meta.dirname!;
export const REPO_DIR = `${BENCH_DIR}/..`;
export const DATA_DIR = `${BENCH_DIR}/.data`;
export const TREE_DIR = `${DATA_DIR}/tree`;
/** Where the native engine's broker listens during the bench (the task grants its socket). */
export const ENGINE_DIR = "/tmp/wmcp-bench-engine";
const MANIFEST = `${DATA_DIR}/manifest.json`;
const RESULTS_DIR = `${BENCH_DIR}/results`;
const RESULTS_FILE = `${RESULTS_DIR}/search.md`;

const ROUNDS = Math.max(1, Number(Deno.env.get("BENCH_ROUNDS") ?? "5") || 5);
/** Untimed pause before every run. */
const PAUSE_MS = 150;
/** grep's locale: UTF-8 aware like rg and wmcp. */
export const GREP_ENV = { LC_ALL: "C.UTF-8" };
export const RG_BASE = ["-n", "--no-heading", "--color=never", "--no-ignore"];
export const GREP_BASE = ["-r", "-n", "-I", "--color=never"];

/** One benchmark query, with its ground truth used while generating the tree. */
export interface Query {
  id: string;
  label: string;
  query: string;
  regex: boolean;
  caseSensitive: boolean;
  /** True when a line of a text file counts as a matching line. */
  truth: (line: string) => boolean;
  rg: string[];
  grep: string[];
}

const FN_RE = /fn_[0-9]+\(/;
const FN4_RE = /fn_4[0-9]{3}\(/;
const TODO_RE = /todo/i;

export const QUERIES: Query[] = [
  {
    id: "rare",
    label: `rare literal \`${NEEDLE}\``,
    query: NEEDLE,
    regex: false,
    caseSensitive: true,
    truth: (l) => l.includes(NEEDLE),
    rg: ["-F", "-e", NEEDLE],
    grep: ["-F", "-e", NEEDLE],
  },
  {
    id: "common",
    label: "common literal `return`",
    query: "return",
    regex: false,
    caseSensitive: true,
    truth: (l) => l.includes("return"),
    rg: ["-F", "-e", "return"],
    grep: ["-F", "-e", "return"],
  },
  {
    id: "icase",
    label: "case-insensitive literal `todo`",
    query: "todo",
    regex: false,
    caseSensitive: false,
    truth: (l) => TODO_RE.test(l),
    rg: ["-F", "-i", "-e", "todo"],
    grep: ["-F", "-i", "-e", "todo"],
  },
  {
    id: "regex",
    label: "regex `fn_[0-9]+\\(`",
    query: "fn_[0-9]+\\(",
    regex: true,
    caseSensitive: true,
    truth: (l) => FN_RE.test(l),
    rg: ["-e", "fn_[0-9]+\\("],
    grep: ["-E", "-e", "fn_[0-9]+\\("],
  },
  {
    // Narrower (about a tenth of the matches): its full result fits an HTTP response
    // (bench/bench.ts compares wmcp over HTTP on it; the broad regex passes the 32 MiB cap).
    id: "regex-narrow",
    label: "regex `fn_4[0-9]{3}\\(`",
    query: "fn_4[0-9]{3}\\(",
    regex: true,
    caseSensitive: true,
    truth: (l) => FN4_RE.test(l),
    rg: ["-e", "fn_4[0-9]{3}\\("],
    grep: ["-E", "-e", "fn_4[0-9]{3}\\("],
  },
];

/** Identifies the queries in the manifest, so changing them regenerates the expected counts. */
const QUERIES_KEY = QUERIES.map((q) =>
  `${q.id}:${q.regex ? "re" : "lit"}:${q.caseSensitive}:${q.query}`
)
  .join("|");

export interface Manifest {
  generatorVersion: number;
  seed: number;
  queriesKey: string;
  dirs: number;
  files: number;
  textFiles: number;
  binaryFiles: number;
  emptyFiles: number;
  totalBytes: number;
  largestFileBytes: number;
  needleFiles: number;
  expected: Record<string, number>;
  generatedAt: string;
  generationMs: number;
}

// ---------------------------------------------------------------------------------------------
// Deterministic PRNG (sfc32)

class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let i = 0; i < 24; i++) this.next();
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** Log-uniform integer in [lo, hi]. */
  logUniform(lo: number, hi: number): number {
    return Math.round(Math.exp(Math.log(lo) + this.next() * (Math.log(hi) - Math.log(lo))));
  }
}

// ---------------------------------------------------------------------------------------------
// Text generators

const NOUNS: readonly string[] = (
  "alpha batch block buffer cache chunk client config context count cursor data delta " +
  "digest entry event field file filter flag format frame group handler hash index " +
  "input item key layer limit list loader lock manager map match message meta mode node " +
  "offset option order output packet page parser path pool queue range reader record " +
  "request result route schema scope server session shard size slot span stack state " +
  "store stream table tag task timer token total tree unit user value vector view " +
  "widget window worker writer zone"
).split(" ");
const VERBS: readonly string[] = (
  "apply build check close compute create decode delete emit encode fetch find flush " +
  "get handle init load merge open parse read render reset resolve save scan set sort " +
  "split sync update validate write"
).split(" ");
const PROSE: readonly string[] = (
  "the the the a a of of to to and and is in it that this for with when if then not be " +
  "will should must may only never always every each before after once value returned " +
  "returns caller cache file line request handler error case note see also above below " +
  "fast slow large small order stable keep we here because otherwise retry timeout " +
  "buffer stream worker queue limit mastodon todos function called twice empty missing " +
  "invalid unicode"
).split(" ");
/** Non-ASCII words, used only in the minority of files that allow them (like real code). */
const UNICODE = ["café", "naïve", "über", "→", "—", "日本語", "🚀", "ñandú", "Ω"];
const TYPES = ["string", "number", "boolean", "Uint8Array", "Record<string, number>", "unknown"];
const OPS = ["===", "!==", "<", ">", "<=", ">="];
const TODO_TAGS = ["TODO", "todo", "Todo", "ToDo", "FIXME", "XXX", "TODO(wmcp)", "NOTE"];
const LEVELS = ["INFO", "INFO", "INFO", "DEBUG", "DEBUG", "WARN", "ERROR"];

type Lang = "ts" | "js" | "py" | "rs" | "go" | "md" | "json" | "log" | "csv" | "txt" | "minjs";

const EXT: Record<Lang, string> = {
  ts: "ts",
  js: "js",
  py: "py",
  rs: "rs",
  go: "go",
  md: "md",
  json: "json",
  log: "log",
  csv: "csv",
  txt: "txt",
  minjs: "min.js",
};

const SMALL_LANGS = (
  "ts ts ts ts ts ts js js py py py rs rs go go md md json txt csv"
).split(" ") as Lang[];
const MEDIUM_LANGS: readonly Lang[] = ["ts", "ts", "js", "py", "log", "log", "json", "md", "csv"];
const LARGE_LANGS: readonly Lang[] = ["log", "log", "log", "json", "json", "minjs", "minjs", "ts"];

class TextGen {
  /** Whether the current file may contain non-ASCII prose words. */
  unicode = false;

  constructor(private readonly r: Rng) {}

  noun(): string {
    return this.r.pick(NOUNS);
  }

  cap(s: string): string {
    return s[0].toUpperCase() + s.slice(1);
  }

  camel(): string {
    const r = this.r;
    return r.chance(0.5)
      ? r.pick(VERBS) + this.cap(this.noun())
      : this.noun() + this.cap(this.noun());
  }

  snake(): string {
    const r = this.r;
    return r.chance(0.5) ? `${r.pick(VERBS)}_${this.noun()}` : `${this.noun()}_${this.noun()}`;
  }

  pascal(): string {
    return this.cap(this.noun()) + this.cap(this.noun());
  }

  sentence(min = 4, max = 14): string {
    const r = this.r;
    const n = r.range(min, max);
    const w: string[] = [];
    for (let i = 0; i < n; i++) {
      w.push(this.unicode && r.chance(0.05) ? r.pick(UNICODE) : r.pick(PROSE));
    }
    return this.cap(w.join(" ")) + ".";
  }

  args(): string {
    const r = this.r;
    const n = r.int(4);
    const a: string[] = [];
    for (let i = 0; i < n; i++) a.push(r.chance(0.2) ? String(r.int(1000)) : this.camel());
    return a.join(", ");
  }

  expr(): string {
    const r = this.r;
    const k = r.int(20);
    if (k < 5) return this.camel();
    if (k < 8) return String(r.int(100000));
    if (k < 12) return `${this.camel()}.${this.camel()}(${this.args()})`;
    if (k < 14) return `fn_${r.int(5000)}(${this.args()})`;
    if (k === 14) return `fn_${this.noun()}(${this.args()})`; // no digits: not a regex match
    if (k === 15) return `"${this.snake()}"`;
    if (k === 16) return `${this.camel()} + ${r.int(64)}`;
    if (k === 17) return `[${this.args()}]`;
    if (k === 18) return `"${this.sentence(8, 30)}"`;
    return `${this.camel()}?.${this.noun()} ?? null`;
  }

  comment(prefix: string): string {
    const r = this.r;
    if (r.chance(0.05)) return `${prefix} ${r.pick(TODO_TAGS)}: ${this.sentence()}`;
    return `${prefix} ${this.sentence()}`;
  }

  line(lang: Lang, indent: number): string {
    switch (lang) {
      case "ts":
      case "js":
        return this.cStyle(indent, lang === "ts");
      case "py":
        return this.python(indent);
      case "rs":
        return this.rust(indent);
      case "go":
        return this.golang(indent);
      case "md":
        return this.markdown();
      case "json":
        return this.jsonLine(indent);
      case "log":
        return this.logLine();
      case "csv":
        return this.csvLine();
      case "txt":
        return this.r.chance(0.1) ? "" : this.sentence(3, 30);
      case "minjs":
        return this.minified();
    }
  }

  private cStyle(depth: number, ts: boolean): string {
    const r = this.r;
    const ind = "  ".repeat(depth);
    const k = r.int(40);
    const t = () => (ts ? `: ${r.pick(TYPES)}` : "");
    if (k < 2) return "";
    if (k < 3 && depth === 0) {
      return `import { ${this.pascal()}, ${this.camel()} } from "./${this.snake()}.ts";`;
    }
    if (k < 5) {
      const params = `${this.camel()}${t()}, ${this.camel()}${t()}`;
      return depth === 0
        ? `export function ${this.camel()}(${params})${t()} {`
        : `${ind}const ${this.camel()} = (${params}) => {`;
    }
    if (k < 11) return `${ind}const ${this.camel()} = ${this.expr()};`;
    if (k < 13) return `${ind}let ${this.camel()}${t()} = ${this.expr()};`;
    if (k < 16) return `${ind}if (${this.camel()} ${r.pick(OPS)} ${this.expr()}) {`;
    if (k < 19) return `${ind}return ${this.expr()};`;
    if (k < 23) return `${ind}}`;
    if (k < 27) return `${ind}${this.camel()}.${this.camel()}(${this.args()});`;
    if (k < 31) return `${ind}${this.comment("//")}`;
    if (k < 32) return `${ind}throw new Error(${JSON.stringify(this.sentence())});`;
    if (k < 33) return `${ind}\tfn_${r.int(300)} (${this.args()}); // spaced call`;
    if (k < 35) return `${ind}${this.camel()} = fn_${r.int(9999)}(${this.expr()}, ${this.args()});`;
    if (k < 36) return `${ind}for (const ${this.noun()} of ${this.camel()}) {`;
    if (k < 37) return `${ind}} else {`;
    if (k < 38) return `${ind}/** ${this.sentence(6, 20)} */`;
    if (k < 39) return `${ind}const message = ${JSON.stringify(this.sentence(20, 60))};`;
    return `${ind}await ${this.camel()}(${this.expr()});`;
  }

  private python(depth: number): string {
    const r = this.r;
    const ind = "    ".repeat(depth);
    const k = r.int(32);
    if (k < 3) return "";
    if (k < 5) return `${ind}def ${this.snake()}(self, ${this.snake()}, ${this.snake()}=None):`;
    if (k < 6) return `class ${this.pascal()}(${this.pascal()}):`;
    if (k < 12) return `${ind}${this.snake()} = ${this.expr().replace(/;$/, "")}`;
    if (k < 15) return `${ind}if ${this.snake()} is not None and ${this.snake()} > ${r.int(100)}:`;
    if (k < 18) return `${ind}return ${this.snake()}`;
    if (k < 21) return `${ind}${this.comment("#")}`;
    if (k < 23) return `${ind}for ${this.noun()} in self.${this.snake()}:`;
    if (k < 25) return `${ind}"""${this.sentence()}"""`;
    if (k < 27) return `${ind}self.${this.snake()}.append(fn_${r.int(800)}(${this.args()}))`;
    if (k < 28) return `${ind}raise ValueError(${JSON.stringify(this.sentence())})`;
    return `${ind}${this.snake()}(${this.args()})`;
  }

  private rust(depth: number): string {
    const r = this.r;
    const ind = "    ".repeat(depth);
    const k = r.int(32);
    if (k < 3) return "";
    if (k < 5) {
      return `${ind}pub fn ${this.snake()}(&self, ${this.noun()}: &str) -> Result<usize> {`;
    }
    if (k < 6) return `impl ${this.pascal()} for ${this.pascal()} {`;
    if (k < 12) return `${ind}let ${this.snake()} = ${this.expr()};`;
    if (k < 14) return `${ind}match ${this.snake()} {`;
    if (k < 16) return `${ind}    ${this.pascal()}::${this.pascal()} => ${this.expr()},`;
    if (k < 18) return `${ind}return Ok(${this.snake()});`;
    if (k < 22) return `${ind}}`;
    if (k < 25) return `${ind}${this.comment("//")}`;
    if (k < 26) return `${ind}/// ${this.sentence()}`;
    if (k < 28) return `${ind}${this.snake()}.push(fn_${r.int(2000)}(${this.args()})?);`;
    return `${ind}${this.snake()}(${this.args()})?;`;
  }

  private golang(depth: number): string {
    const r = this.r;
    const ind = "\t".repeat(depth);
    const k = r.int(32);
    if (k < 3) return "";
    if (k < 5) {
      return `func (${
        this.noun()[0]
      } *${this.pascal()}) ${this.pascal()}(${this.noun()} string) (int, error) {`;
    }
    if (k < 11) return `${ind}${this.camel()} := ${this.expr()}`;
    if (k < 14) return `${ind}if err != nil {`;
    if (k < 17) return `${ind}return ${this.camel()}, nil`;
    if (k < 18) return `${ind}return 0, fmt.Errorf(${JSON.stringify(this.sentence())})`;
    if (k < 22) return `${ind}}`;
    if (k < 25) return `${ind}${this.comment("//")}`;
    if (k < 27) {
      return `${ind}${this.camel()} = append(${this.camel()}, fn_${r.int(700)}(${this.args()}))`;
    }
    return `${ind}${this.camel()}.${this.pascal()}(${this.args()})`;
  }

  private markdown(): string {
    const r = this.r;
    const k = r.int(20);
    if (k < 3) return "";
    if (k < 4) return `${"#".repeat(r.range(1, 3))} ${this.cap(this.snake().replace("_", " "))}`;
    if (k < 7) return `- ${this.sentence(3, 12)}`;
    if (k < 8) return `    ${this.camel()}(${this.args()});`;
    if (k < 9) return `> ${r.pick(TODO_TAGS)}: ${this.sentence()}`;
    const parts: string[] = [];
    const n = r.range(1, 8);
    for (let i = 0; i < n; i++) parts.push(this.sentence(6, 24));
    if (r.chance(0.05)) parts.push(`Call \`fn_${r.int(99)}(x)\` to ${r.pick(VERBS)} it.`);
    return parts.join(" ");
  }

  private jsonLine(depth: number): string {
    const r = this.r;
    const ind = "  ".repeat(depth + 1);
    const k = r.int(10);
    if (k < 4) return `${ind}"${this.snake()}": ${r.int(1_000_000)},`;
    if (k < 7) return `${ind}"${this.snake()}": "${this.snake()}-${r.int(1000)}",`;
    if (k < 8) return `${ind}"${this.noun()}": ${JSON.stringify(this.sentence(4, 20))},`;
    if (k < 9) {
      return `${ind}"${this.noun()}": { "${this.noun()}": ${r.chance(0.5)}, "id": ${
        r.int(9999)
      } },`;
    }
    return `${ind}"${this.noun()}": [${r.int(100)}, ${r.int(100)}, ${r.int(100)}],`;
  }

  private logLine(): string {
    const r = this.r;
    const p2 = (n: number) => String(n).padStart(2, "0");
    const ts = `2024-${p2(r.range(1, 12))}-${p2(r.range(1, 28))}T${p2(r.int(24))}:${
      p2(r.int(60))
    }:${p2(r.int(60))}.${String(r.int(1000)).padStart(3, "0")}Z`;
    const k = r.int(12);
    if (k === 0) {
      return `    at fn_${r.int(400)} (src/${this.snake()}.ts:${r.int(900)}:${r.int(80)})`;
    }
    const hex = (r.int(0x7fffffff) >>> 0).toString(16).padStart(8, "0");
    return `${ts} ${r.pick(LEVELS)} [worker-${r.int(16)}] ${this.sentence(3, 16)} id=${hex} dur=${
      r.int(5000)
    }ms`;
  }

  private csvLine(): string {
    const r = this.r;
    return `${r.int(1_000_000)},${this.snake()},${r.int(1000) / 10},"${this.sentence(2, 10)}",${
      r.chance(0.5)
    }`;
  }

  private minified(): string {
    const r = this.r;
    const target = r.range(2000, 20000);
    const parts: string[] = [];
    let len = 0;
    while (len < target) {
      const a = this.camel();
      const s = r.chance(0.3)
        ? `function ${a}(e,t){return e.${this.camel()}(fn_${r.int(90)}(t),${r.int(99)})}`
        : r.chance(0.5)
        ? `var ${a}=${JSON.stringify(this.snake())},${this.camel()}=${r.int(9999)};`
        : `if(${a}.${this.noun()}>${r.int(99)}){${this.camel()}(${a})}`;
      parts.push(s);
      len += s.length;
    }
    return parts.join("");
  }
}

// ---------------------------------------------------------------------------------------------
// Tree generation

interface PlannedFile {
  rel: string;
  kind: "text" | "binary" | "empty";
  lang: Lang;
  targetChars: number;
}

function planTree(r: Rng): { dirs: string[]; files: PlannedFile[] } {
  const dirs: string[] = [];
  const fileDirs: string[] = [];
  const addDir = (rel: string, depth: number) => {
    dirs.push(rel);
    const n = depth === 1 ? r.int(4) : r.range(30, 70);
    for (let i = 0; i < n; i++) fileDirs.push(rel);
    const children = depth < 3 ? r.range(3, 6) : depth < 5 && r.chance(0.45) ? r.range(1, 3) : 0;
    for (let c = 0; c < children; c++) {
      addDir(`${rel}/${r.pick(NOUNS)}_${c}`, depth + 1);
    }
  };
  for (let t = 0; fileDirs.length < TARGET_FILES; t++) addDir(`${r.pick(VERBS)}_${t}`, 1);
  fileDirs.length = TARGET_FILES;

  const gen = new TextGen(r);
  const files: PlannedFile[] = fileDirs.map((dir, i) => {
    const medium = r.chance(0.06);
    const lang = r.pick(medium ? MEDIUM_LANGS : SMALL_LANGS);
    const targetChars = medium ? r.logUniform(20_000, 200_000) : r.logUniform(300, 20_000);
    const kind = r.chance(0.003) ? "empty" : "text";
    return { rel: `${dir}/${gen.snake()}_${i}.${EXT[lang]}`, kind, lang, targetChars };
  });
  for (let i = 0; i < LARGE_FILES; i++) {
    const f = files[r.int(files.length)];
    f.kind = "text";
    f.lang = LARGE_LANGS[i % LARGE_LANGS.length];
    f.rel = f.rel.replace(/\.[a-z.]+$/, `.${EXT[f.lang]}`);
    f.targetChars = r.range(1_000_000, 3_900_000);
  }
  const binExt = ["png", "bin", "woff2", "sqlite", "gz", "o", "pdf", "jpg"];
  for (let i = 0; i < BINARY_FILES; i++) {
    const f = files[r.int(files.length)];
    f.kind = "binary";
    f.rel = f.rel.replace(/\.[a-z.]+$/, `.${binExt[i % binExt.length]}`);
    f.targetChars = r.logUniform(4_000, 800_000);
  }
  return { dirs, files };
}

function textLines(gen: TextGen, r: Rng, lang: Lang, targetChars: number): string[] {
  const lines: string[] = [];
  let chars = 0;
  let depth = 0;
  while (chars < targetChars) {
    const line = gen.line(lang, depth);
    if (line.endsWith("{") || line.endsWith(":")) depth = Math.min(depth + 1, 5);
    else if (line.trimStart().startsWith("}") || r.chance(0.08)) depth = Math.max(depth - 1, 0);
    lines.push(line);
    chars += line.length + 1;
  }
  return lines;
}

function binaryBytes(r: Rng, size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = r.int(256);
  // A PNG-like signature: a NUL byte within the first 16 bytes makes every tool call it binary.
  out.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d], 0);
  // Text that must not be counted (a tool that searched binary files would over-count).
  const planted = new TextEncoder().encode(`\n${NEEDLE} return todo fn_1(\n`);
  for (let at = 64; at + planted.length < size; at += 1 + r.int(size / 4)) out.set(planted, at);
  return out;
}

/** Generates the tree and its manifest (throws away any previous data). */
export function generateTree(): Manifest {
  const t0 = performance.now();
  // Only the tree and its manifest: bench/.data also holds npm installs and profiles.
  for (const path of [MANIFEST, TREE_DIR]) {
    try {
      Deno.removeSync(path, { recursive: true });
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  Deno.mkdirSync(TREE_DIR, { recursive: true });
  const r = new Rng(SEED);
  const gen = new TextGen(r);
  const { dirs, files } = planTree(r);
  for (const d of dirs) Deno.mkdirSync(`${TREE_DIR}/${d}`, { recursive: true });

  const textIdx = files.flatMap((f, i) => (f.kind === "text" ? [i] : []));
  const needleAt = new Set<number>();
  // Always plant in the largest planned text file too (a match near the end of a big file).
  const biggest = textIdx.reduce((a, b) => (files[b].targetChars > files[a].targetChars ? b : a));
  needleAt.add(biggest);
  while (needleAt.size < NEEDLE_FILES) needleAt.add(textIdx[r.int(textIdx.length)]);

  const expected: Record<string, number> = Object.fromEntries(QUERIES.map((q) => [q.id, 0]));
  const enc = new TextEncoder();
  let totalBytes = 0;
  let largest = 0;
  let binaryFiles = 0;
  let emptyFiles = 0;
  let lastReport = performance.now();
  for (let i = 0; i < files.length; i++) {
    const f = files[i];
    let bytes: Uint8Array;
    if (f.kind === "binary") {
      bytes = binaryBytes(r, f.targetChars);
      binaryFiles++;
    } else if (f.kind === "empty") {
      bytes = new Uint8Array(0);
      emptyFiles++;
    } else {
      gen.unicode = f.lang === "md" || r.chance(0.08);
      const lines = textLines(gen, r, f.lang, f.targetChars);
      if (needleAt.has(i)) {
        const n = i === biggest ? 1 : r.range(1, 4);
        for (let k = 0; k < n; k++) {
          const at = i === biggest ? lines.length - 2 - r.int(3) : r.int(lines.length + 1);
          const how = r.int(4);
          if (how === 0 && at < lines.length) lines[at] += ` // ${NEEDLE}`;
          else if (how === 1 && at < lines.length) lines[at] = `${NEEDLE} ${lines[at]} ${NEEDLE}`;
          else lines.splice(at, 0, `const marker = "${NEEDLE}";`);
        }
      }
      for (const line of lines) {
        for (const q of QUERIES) if (q.truth(line)) expected[q.id]++;
      }
      const finalNewline = !r.chance(0.05);
      bytes = enc.encode(lines.join("\n") + (finalNewline ? "\n" : ""));
    }
    if (bytes.length >= SEARCH_FILE_CAP) {
      throw new Error(`generator bug: ${f.rel} has ${bytes.length} bytes (cap ${SEARCH_FILE_CAP})`);
    }
    Deno.writeFileSync(`${TREE_DIR}/${f.rel}`, bytes);
    totalBytes += bytes.length;
    largest = Math.max(largest, bytes.length);
    if (performance.now() - lastReport > 5000) {
      lastReport = performance.now();
      console.log(`  ... ${i + 1}/${files.length} files, ${mb(totalBytes)}`);
    }
  }
  if (files.length < MIN_FILES || totalBytes < MIN_BYTES) {
    throw new Error(
      `generator bug: ${files.length} files, ${totalBytes} bytes is below the minimum`,
    );
  }
  const manifest: Manifest = {
    generatorVersion: GENERATOR_VERSION,
    seed: SEED,
    queriesKey: QUERIES_KEY,
    dirs: dirs.length,
    files: files.length,
    textFiles: files.length - binaryFiles,
    binaryFiles,
    emptyFiles,
    totalBytes,
    largestFileBytes: largest,
    needleFiles: needleAt.size,
    expected,
    generatedAt: new Date().toISOString(),
    generationMs: Math.round(performance.now() - t0),
  };
  // Written last: an interrupted generation leaves no manifest and is redone next time.
  Deno.writeTextFileSync(MANIFEST, JSON.stringify(manifest, null, 2) + "\n");
  return manifest;
}

/** The cached tree's manifest, or null when the tree must be (re)generated. */
export function loadManifest(): Manifest | null {
  try {
    const m = JSON.parse(Deno.readTextFileSync(MANIFEST)) as Manifest;
    if (m.generatorVersion !== GENERATOR_VERSION || m.queriesKey !== QUERIES_KEY) return null;
    if (!Deno.statSync(TREE_DIR).isDirectory) return null;
    return m;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Tools

/** A text file's content, or a fallback when it cannot be read (e.g. not on Linux). */
function readOr(path: string, fallback: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return fallback;
  }
}

/** Bytes as MiB with one decimal. */
export function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** A command's trimmed stdout when it succeeds, else null. */
export async function commandText(cmd: string, args: string[]): Promise<string | null> {
  try {
    const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
  } catch {
    return null;
  }
}

/** rg's version line, installing ripgrep with apt-get when missing (unless BENCH_NO_INSTALL=1). */
export async function ensureRipgrep(): Promise<string | null> {
  const have = await commandText("rg", ["--version"]);
  if (have !== null) return have.split("\n")[0];
  if (Deno.env.get("BENCH_NO_INSTALL") === "1") return null;
  console.log("rg not found: running apt-get update && apt-get install -y ripgrep ...");
  const env = { DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [["update"], ["install", "-y", "ripgrep"]]) {
    try {
      const out = await new Deno.Command("apt-get", { args, env, stdout: "piped", stderr: "piped" })
        .output();
      if (!out.success) {
        const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-5).join("\n");
        console.log(`apt-get ${args.join(" ")} failed (exit ${out.code}):\n${err}`);
        return null;
      }
    } catch (err) {
      console.log(`apt-get ${args.join(" ")} could not run: ${(err as Error).message}`);
      return null;
    }
  }
  const v = await commandText("rg", ["--version"]);
  return v === null ? null : v.split("\n")[0];
}

/** One timed run: wall-clock ms and the number of matches it reported. */
export interface Sample {
  ms: number;
  matches: number;
  note?: string;
}

/** Runs a command with stdout piped, counting its lines as they stream in. */
export async function runCounted(
  cmd: string,
  args: string[],
  cwd: string,
  env?: Record<string, string>,
): Promise<Sample> {
  const t0 = performance.now();
  const child = new Deno.Command(cmd, {
    args,
    cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let lines = 0;
  let last = 10;
  for await (const chunk of child.stdout) {
    let i = -1;
    while ((i = chunk.indexOf(10, i + 1)) !== -1) lines++;
    if (chunk.length > 0) last = chunk[chunk.length - 1];
  }
  const status = await child.status;
  const ms = performance.now() - t0;
  if (last !== 10) lines++;
  const err = (await stderr).trim();
  // Exit 1 means "no match" for rg and grep; 2 and up is an error.
  const note = status.code > 1 || err !== ""
    ? `exit ${status.code}${err ? `: ${err.split("\n")[0]}` : ""}`
    : undefined;
  return { ms, matches: lines, note };
}

/**
 * `binaryFiles`: the count filesSkipped.binary must report, or undefined for the native engine,
 * which counts only the binary files it read (INTERFACES.md, "search_text engines").
 */
async function runWmcp(ws: Workspace, q: Query, binaryFiles?: number): Promise<Sample> {
  const t0 = performance.now();
  const res = await runOperation({ workspace: ws }, "search_text", {
    query: q.query,
    regex: q.regex,
    caseSensitive: q.caseSensitive,
  });
  const ms = performance.now() - t0;
  const r = res as {
    matches: unknown[];
    truncated: boolean;
    filesSkipped: { binary: number; tooLarge: number; unreadable: number };
  };
  const notes: string[] = [];
  if (r.truncated) notes.push("truncated");
  if (binaryFiles !== undefined && r.filesSkipped.binary !== binaryFiles) {
    notes.push(`skipped ${r.filesSkipped.binary} binary files, expected ${binaryFiles}`);
  }
  if (r.filesSkipped.tooLarge || r.filesSkipped.unreadable) {
    notes.push(
      `skipped tooLarge=${r.filesSkipped.tooLarge} unreadable=${r.filesSkipped.unreadable}`,
    );
  }
  return { ms, matches: r.matches.length, note: notes.join("; ") || undefined };
}

async function runCli(q: Query): Promise<Sample> {
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      // As the cli task grants: the tree, and the engine's worker modules.
      `--allow-read=${TREE_DIR},${REPO_DIR}/src/workspace`,
      "cli.ts",
      "op",
      "search_text",
      "--root",
      TREE_DIR,
      "--limit",
      `maxMatches=${WMCP_LIMITS.maxMatches}`,
      "--limit",
      `maxSearchFileBytes=${WMCP_LIMITS.maxSearchFileBytes}`,
      "--limit",
      `maxResultBytes=${WMCP_LIMITS.maxResultBytes}`,
      "--output",
      "json",
      "--arguments",
      JSON.stringify({ query: q.query, regex: q.regex, caseSensitive: q.caseSensitive }),
    ],
    cwd: REPO_DIR,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  if (!out.success) {
    const err = new TextDecoder().decode(out.stderr).trim().split("\n")[0];
    return { ms, matches: -1, note: `exit ${out.code}: ${err}` };
  }
  const res = JSON.parse(new TextDecoder().decode(out.stdout)) as { matches: unknown[] };
  return { ms, matches: res.matches.length };
}

async function runStartup(): Promise<Sample> {
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "cli.ts", "--version"],
    cwd: REPO_DIR,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  return { ms, matches: 0, note: out.success ? undefined : `exit ${out.code}` };
}

// ---------------------------------------------------------------------------------------------
// Measurement

type ToolId = "wmcp" | "native" | "rg" | "grep" | "cli" | "startup";

interface Case {
  query: Query;
  tool: ToolId;
  run: () => Promise<Sample>;
  samples: Sample[];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function fmtMs(ms: number | undefined): string {
  if (ms === undefined) return "n/a";
  return ms >= 100 ? ms.toFixed(0) : ms.toFixed(1);
}

function ratio(a: number | undefined, b: number | undefined): string {
  return a === undefined || b === undefined ? "n/a" : `${(a / b).toFixed(1)}x`;
}

async function main(): Promise<void> {
  const started = performance.now();
  console.log(`wmcp search_text benchmark (deno ${Deno.version.deno}, ${ROUNDS} rounds)\n`);

  const loadBefore = (await commandText("cat", ["/proc/loadavg"])) ?? "unknown";
  // 1. Data.
  let manifest = Deno.env.get("BENCH_REGENERATE") === "1" ? null : loadManifest();
  if (manifest) {
    console.log(`data: reusing ${TREE_DIR} (generator v${manifest.generatorVersion})`);
  } else {
    console.log(`data: generating ${TREE_DIR} (generator v${GENERATOR_VERSION}) ...`);
    manifest = generateTree();
    console.log(`data: generated in ${(manifest.generationMs / 1000).toFixed(1)} s (not counted)`);
  }
  console.log(
    `data: ${manifest.files} files (${manifest.binaryFiles} binary, ${manifest.emptyFiles} empty) ` +
      `in ${manifest.dirs} dirs, ${mb(manifest.totalBytes)}, largest ${
        mb(manifest.largestFileBytes)
      }`,
  );

  // 2. Tools.
  const rgVersion = await ensureRipgrep();
  const grepVersion = (await commandText("grep", ["--version"]))?.split("\n")[0] ?? null;
  console.log(`rg: ${rgVersion ?? "UNAVAILABLE"}`);
  console.log(`grep: ${grepVersion ?? "UNAVAILABLE"}\n`);

  // 3. Cases.
  const ws = await Workspace.open({
    root: TREE_DIR,
    writable: false,
    limits: WMCP_LIMITS,
  });
  const binaryFiles = manifest.binaryFiles;
  // The native engine as a server launched with --engine auto has it: a real broker (ripgrep and
  // find in their own bubblewrap sandbox) as the workspace's prefilter (decision 0054).
  // The broker's socket at a fixed path, the one the bench:search task grants (Deno grants a
  // Unix socket by its exact path).
  // A directory an interrupted run left behind is the bench's own: the broker refuses an
  // existing one.
  await Deno.remove(ENGINE_DIR, { recursive: true }).catch(() => {});
  const broker = await startBroker(TREE_DIR, { dir: ENGINE_DIR });
  const native = "reason" in broker
    ? undefined
    : new NativeEngine({ socket: broker.socket, token: broker.token });
  const report = native ? await native.report() : undefined;
  console.log(
    `native engine: ${
      report?.native ?? report?.reason ?? ("reason" in broker ? broker.reason : "")
    }`,
  );
  const nativeWs = native
    ? await Workspace.open({
      root: TREE_DIR,
      writable: false,
      limits: WMCP_LIMITS,
      prefilter: native,
    })
    : undefined;
  const groups: Case[][] = QUERIES.map((q) => {
    const cases: Case[] = [{
      query: q,
      tool: "wmcp",
      run: () => runWmcp(ws, q, binaryFiles),
      samples: [],
    }];
    if (nativeWs) {
      cases.push({
        query: q,
        tool: "native",
        run: () => runWmcp(nativeWs, q),
        samples: [],
      });
    }
    if (rgVersion) {
      const run = () => runCounted("rg", [...RG_BASE, ...q.rg, "."], TREE_DIR);
      cases.push({ query: q, tool: "rg", run, samples: [] });
    }
    if (grepVersion) {
      const run = () => runCounted("grep", [...GREP_BASE, ...q.grep, "."], TREE_DIR, GREP_ENV);
      cases.push({ query: q, tool: "grep", run, samples: [] });
    }
    if (q.id === "rare") {
      cases.push({ query: q, tool: "cli", run: () => runCli(q), samples: [] });
      cases.push({ query: q, tool: "startup", run: runStartup, samples: [] });
    }
    return cases;
  });

  // 4. Rounds: round 0 warms the page cache and the JIT and is not counted; tools are
  // interleaved (and their order rotated) within every round so they share the noise.
  for (let round = 0; round <= ROUNDS; round++) {
    const t0 = performance.now();
    for (const [qi, cases] of groups.entries()) {
      for (let k = 0; k < cases.length; k++) {
        const c = cases[(k + round + qi) % cases.length];
        // Let the previous run's background work (V8 GC of a large result, process exit) settle.
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        const s = await c.run();
        if (round > 0) c.samples.push(s);
        else if (s.note) console.log(`warm-up ${c.tool} ${c.query.id}: ${s.note}`);
      }
    }
    const took = ((performance.now() - t0) / 1000).toFixed(1);
    console.log(`${round === 0 ? "warm-up" : `round ${round}/${ROUNDS}`}: ${took} s`);
  }

  // 5. Report.
  const warnings: string[] = [];
  const rows: string[] = [];
  const spread: string[] = [];
  const med = (c: Case | undefined) => (c ? median(c.samples.map((s) => s.ms)) : undefined);
  for (const cases of groups) {
    const q = cases[0].query;
    const by = (t: ToolId) => cases.find((c) => c.tool === t);
    const expected = manifest.expected[q.id];
    const counts: string[] = [];
    let ok = true;
    for (const c of cases) {
      if (c.tool === "startup") continue;
      const seen = [...new Set(c.samples.map((s) => s.matches))];
      const notes = [...new Set(c.samples.flatMap((s) => (s.note ? [s.note] : [])))];
      if (seen.length !== 1 || seen[0] !== expected || notes.length) ok = false;
      counts.push(`${c.tool} ${seen.join("/")}${notes.length ? ` (${notes.join("; ")})` : ""}`);
    }
    const matches = ok
      ? String(expected)
      : `**MISMATCH** expected ${expected}: ${counts.join(", ")}`;
    if (!ok) warnings.push(`${q.label}: ${matches}`);
    const [w, n, rg, gr] = [med(by("wmcp")), med(by("native")), med(by("rg")), med(by("grep"))];
    rows.push(
      `| ${q.label} | ${fmtMs(w)} | ${fmtMs(n)} | ${fmtMs(rg)} | ${fmtMs(gr)} | ${ratio(w, rg)} | ${
        ratio(n, rg)
      } | ${ratio(w, gr)} | ${matches} |`,
    );
    const cli = by("cli");
    if (cli) {
      const cm = med(cli);
      rows.push(
        `| ${q.label}, wmcp via CLI child process | ${fmtMs(cm)} | | ${fmtMs(rg)} | ${
          fmtMs(gr)
        } | ${ratio(cm, rg)} | | ${ratio(cm, gr)} | ${ok ? expected : "see above"} |`,
      );
    }
    const st = by("startup");
    if (st) {
      rows.push(`| deno start-up only (\`cli.ts --version\`) | ${fmtMs(med(st))} | | | | | | | |`);
    }
    for (const c of cases) {
      const ms = c.samples.map((s) => s.ms);
      spread.push(
        `| ${q.id} | ${c.tool} | ${fmtMs(median(ms))} | ${fmtMs(Math.min(...ms))} | ${
          fmtMs(Math.max(...ms))
        } | ${ms.map(fmtMs).join(", ")} |`,
      );
    }
  }
  const table = [
    "| query | wmcp ms | native ms | rg ms | grep ms | wmcp/rg | native/rg | wmcp/grep | matches |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
  ].join("\n");
  console.log(`\n${table}\n`);
  for (const w of warnings) console.log(`WARNING: match counts disagree: ${w}`);

  const nproc = (await commandText("nproc", [])) ?? String(navigator.hardwareConcurrency);
  // Deno needs --allow-all to read /proc directly, so these go through child processes.
  const cpuinfo = (await commandText("cat", ["/proc/cpuinfo"])) ?? "";
  const meminfo = (await commandText("cat", ["/proc/meminfo"])) ?? "";
  const cpu = /model name\s*:\s*(.*)/.exec(cpuinfo)?.[1] ?? "unknown";
  const memKb = Number(/MemTotal:\s*(\d+)/.exec(meminfo)?.[1] ?? NaN);
  const osName = /PRETTY_NAME="?([^"\n]*)/.exec(readOr("/etc/os-release", ""))?.[1] ??
    Deno.build.os;
  const kernel = (await commandText("uname", ["-sr"])) ?? "unknown";
  const loadAfter = (await commandText("cat", ["/proc/loadavg"])) ?? "unknown";
  const md = `# search_text benchmark

Generated by \`deno task bench\` (bench/search_bench.ts) on ${new Date().toISOString()}.
Medians of ${ROUNDS} timed rounds after one warm-up round; tools interleaved per round.
Lower is better; ratios above 1x mean wmcp is slower.

${table}

${warnings.map((w) => `**WARNING** match counts disagree: ${w}\n`).join("")}
## Machine and data

| fact | value |
| --- | --- |
| nproc | ${nproc} |
| CPU | ${cpu} |
| load average (start; end) | ${loadBefore}; ${loadAfter} |
| memory | ${Number.isNaN(memKb) ? "unknown" : mb(memKb * 1024)} |
| OS | ${osName}, ${kernel} (${Deno.build.arch}) |
| deno | ${Deno.version.deno} (V8 ${Deno.version.v8}) |
| rg | ${rgVersion ?? "unavailable"} |
| grep | ${grepVersion ?? "unavailable"} (LC_ALL=${GREP_ENV.LC_ALL}) |
| files | ${manifest.files} (${manifest.textFiles} text, ${manifest.binaryFiles} binary, ${manifest.emptyFiles} empty) |
| directories | ${manifest.dirs} |
| total bytes | ${manifest.totalBytes} (${mb(manifest.totalBytes)}) |
| largest file | ${manifest.largestFileBytes} bytes |
| generator | v${manifest.generatorVersion}, seed 0x${manifest.seed.toString(16)} |

## Commands

- wmcp: \`Workspace.open({ root, limits: ${JSON.stringify(WMCP_LIMITS)} })\`
  then \`runOperation({ workspace }, "search_text", { query, regex, caseSensitive })\`, in-process
  (warm JIT); match count = \`matches.length\`.
- native: the same workspace with the native engine's prefilter (decision 0054): a real engine
  broker (\`startBroker\`, as the server launcher starts it) running ripgrep and find in their own
  bubblewrap sandbox; \`filesSkipped.binary\` counts only the binary files it read.
- wmcp CLI: \`deno run --allow-read=TREE,src/workspace cli.ts op search_text --root TREE --limit ... --arguments JSON\`.
- rg: \`rg ${RG_BASE.join(" ")} [-F] [-i] -e PATTERN .\` (cwd = tree; default thread count).
- grep: \`LC_ALL=${GREP_ENV.LC_ALL} grep ${
    GREP_BASE.join(" ")
  } [-F|-E] [-i] -e PATTERN .\` (cwd = tree).
- rg and grep stdout is piped into the benchmark process and its lines are counted as they stream.

## Spread (ms)

| query | tool | median | min | max | samples |
| --- | --- | ---: | ---: | ---: | --- |
${spread.join("\n")}
`;
  Deno.mkdirSync(RESULTS_DIR, { recursive: true });
  Deno.writeTextFileSync(RESULTS_FILE, md);
  // `deno task check` runs `deno fmt --check` over the repository, tables included.
  const fmt = await new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--quiet", RESULTS_FILE],
    cwd: REPO_DIR,
    stdout: "null",
    stderr: "inherit",
  }).output();
  if (!fmt.success) console.log(`warning: deno fmt ${RESULTS_FILE} failed (exit ${fmt.code})`);
  console.log(`wrote ${RESULTS_FILE}`);
  nativeWs?.engine.close();
  native?.close();
  if (!("reason" in broker)) await broker.stop();
  console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (warnings.length) Deno.exitCode = 1;
}

if (import.meta.main) await main();
