/**
 * Deno permissions as data: read, write, net, env, run and sys, collected once and turned into
 * `--allow-*` flags in one place, with the check that a path can be named in a flag (Deno's flag
 * syntax splits on commas) made once, when the path is added, and again before the flags are
 * written. Every child this project starts with scoped permissions gets them from a Grants.
 */

/** A path that cannot be granted (Deno's flag syntax splits it): a usage error, exit 2. */
export class UngrantablePathError extends Error {
  /** The path as the user spelled it, and what it was named by (a flag, or what it is). */
  constructor(readonly path: string, readonly flag: string) {
    super(
      `cannot grant access to ${flag} ${path}: Deno's permission flags cannot name a path ` +
        "containing a comma; rename it or copy it to a path without one",
    );
    this.name = "UngrantablePathError";
  }
}

/** Throws UngrantablePathError when `value` cannot appear in a Deno permission flag. */
export function grantable(value: string, what: string, spelled: string = value): void {
  if (value.includes(",")) throw new UngrantablePathError(spelled, what);
}

/** Whether `value` can appear in a Deno permission flag. */
export function isGrantable(value: string): boolean {
  return !value.includes(",");
}

/** The permission kinds a Grants holds. */
export type GrantKind = "read" | "write" | "net" | "env" | "run" | "sys";

/**
 * The permissions one child gets. Methods return `this`, so a plan reads as one chain. The flags
 * come out in the order each kind was first granted (kinds named at construction first), so a
 * plan's flags read as it was written.
 */
export class Grants {
  /** Each kind: unscoped (`all`) or its scopes, in the order kinds were first granted. */
  #kinds = new Map<GrantKind, "all" | Set<string>>();

  /** A Grants whose flags name the kinds in `first` before the others (when they are granted). */
  constructor(first: readonly GrantKind[] = []) {
    for (const kind of first) this.#kinds.set(kind, new Set());
  }

  #add(kind: GrantKind, scopes: readonly string[] | "all"): void {
    const now = this.#kinds.get(kind);
    if (scopes === "all" || now === "all") this.#kinds.set(kind, "all");
    else this.#kinds.set(kind, new Set([...(now ?? []), ...scopes]));
  }

  /**
   * Read (and write, with `write: true`) on `path`; `real` (its links resolved) is granted beside
   * it when it differs. `what` names the path in the error when it cannot be granted; `spelled`
   * is the path as the user typed it.
   */
  path(
    path: string,
    options: { what: string; spelled?: string; write?: boolean; real?: string },
  ): this {
    grantable(path, options.what, options.spelled);
    const all = [path];
    if (options.real !== undefined && options.real !== path) {
      grantable(options.real, options.what);
      all.push(options.real);
    }
    this.#add("read", all);
    if (options.write) this.#add("write", all);
    return this;
  }

  /** Read on `path` (see path). */
  read(path: string, what: string): this {
    return this.path(path, { what });
  }

  /** Any kind on these scopes (`what` names them in an error), or unscoped (`all`). */
  allow(kind: GrantKind, scopes: readonly string[] | "all", what: string = kind): this {
    if (scopes !== "all") { for (const s of scopes) grantable(s, what); }
    this.#add(kind, scopes);
    return this;
  }

  /** The `--allow-*` flags, each kind once, in the order kinds were first granted. */
  flags(): string[] {
    const out: string[] = [];
    for (const [kind, s] of this.#kinds) {
      if (s !== "all" && s.size === 0) continue;
      if (s !== "all") { for (const v of s) grantable(v, "a granted path"); }
      out.push(s === "all" ? `--allow-${kind}` : `--allow-${kind}=${[...s].join(",")}`);
    }
    return out;
  }
}
