/**
 * copy_path's refusals (decision 0058): a hard-linked source, what an existing destination entry
 * cannot be replaced by, and a replacement not confirmed. copy.ts checks them while it plans and
 * copies.
 *
 * @module
 */
import { WorkspaceError } from "./errors.ts";
import { refuseSpecial } from "./containment.ts";
import { refuseHardLinked } from "./atomic.ts";
import type { FsInfo } from "./fs/types.ts";

/** HARD_LINKED for a source file with more than one link: its content is not copied. */
export function refuseHardLinkedSource(info: Pick<FsInfo, "nlink">, rel: string): void {
  if (info.nlink !== null && info.nlink > 1) {
    throw new WorkspaceError(
      "HARD_LINKED",
      `source ${rel} has ${info.nlink} hard links; a hard-linked file is not copied (its ` +
        "content can be another name's, outside the workspace too)",
      { argument: "source", details: { nlink: info.nlink } },
    );
  }
}

/**
 * The refusals of an existing destination entry: overwrite not asked for; a directory copied
 * onto a non-directory (a link to a directory too: links are never followed) or a non-directory
 * onto a directory; a special file or a hard-linked file to be replaced.
 */
export function checkReplace(
  srcIsDir: boolean,
  rel: string,
  there: FsInfo,
  overwrite: boolean,
): void {
  if (!overwrite) {
    throw new WorkspaceError(
      "ALREADY_EXISTS",
      `${rel} already exists (pass overwrite: true to ${
        srcIsDir && there.isDirectory ? "copy into it" : "replace it"
      })`,
      { argument: "destination" },
    );
  }
  if (srcIsDir) {
    if (!there.isDirectory) {
      throw new WorkspaceError("NOT_A_DIRECTORY", `destination ${rel} is not a directory`, {
        argument: "destination",
      });
    }
    return;
  }
  if (there.isDirectory) {
    throw new WorkspaceError("IS_A_DIRECTORY", `destination ${rel} is a directory`, {
      argument: "destination",
    });
  }
  if (there.isSymlink) return; // the link itself is replaced, never its target
  refuseSpecial(there, rel, "destination");
  refuseHardLinked(there, rel, "destination");
}

/**
 * Replacing existing files or links needs `confirm: true`, as write_file's overwrite does (the
 * servers ask the user through elicitation when the client supports it); copying into an
 * existing directory without replacing anything does not. Checked before anything is written.
 */
export function assertConfirmed(args: { confirm?: boolean }, rel: string, replaces: number): void {
  if (replaces === 0 || args.confirm === true) return;
  throw new WorkspaceError(
    "CONFIRMATION_REQUIRED",
    `copying onto ${rel} replaces ${replaces} existing ${
      replaces === 1 ? "file or link" : "files or links"
    }: pass confirm: true`,
    { argument: "confirm" },
  );
}
