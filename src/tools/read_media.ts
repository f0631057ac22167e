/**
 * read_media: any file as base64 with its MIME type, size and sha256. Its payload crosses the
 * wire once, as an image, audio or resource block, so `data` is a content-only field.
 */
import { z } from "zod";
import {
  type ContentBlock,
  type ContentOptions,
  defineOperation,
  defineTool,
  type ToolResult,
  type ToolUnit,
} from "./unit.ts";
import { pathArg, READ } from "./args.ts";
import { shown, str } from "./text.ts";
import { readMedia } from "../workspace/read.ts";

/** URI prefix of read_media's embedded resource: workspace-relative, no machine path. */
export const MEDIA_URI_PREFIX = "wmcp://workspace/";

/** Image types hosts accept in an `image` block (the Claude API takes only these four). */
export const IMAGE_BLOCK_TYPES: readonly string[] = Object.freeze([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
]);

/** Audio types sent as an `audio` block (the common ones hosts take); others go as a resource. */
export const AUDIO_BLOCK_TYPES: readonly string[] = Object.freeze([
  "audio/wav",
  "audio/mpeg",
  "audio/ogg",
  "audio/flac",
  "audio/x-flac",
  "audio/aac",
  "audio/webm",
  "audio/mp4",
]);

/** The workspace-relative URI of a read_media resource block. */
export function mediaUri(path: string): string {
  return MEDIA_URI_PREFIX + path.split("/").map(encodeURIComponent).join("/");
}

const operation = defineOperation({
  name: "read_media",
  title: "Read a binary or media file",
  description:
    "Read any file (images, audio, archives, other binary data) as base64 with its MIME type (from the file extension), size and sha256. Files over the workspace's maxMediaBytes (whose base64 always fits the result budget maxResultBytes) are refused with TOO_LARGE.",
  inputSchema: z.strictObject({ path: pathArg() }),
  outputSchema: z.object({
    path: z.string(),
    mimeType: z.string(),
    size: z.int(),
    sha256: z.string(),
    data: z.string().describe("Base64 of the file's bytes."),
  }),
  annotations: READ,
  needsWrite: false,
  run: (ctx, input) => readMedia(ctx.workspace, input, { signal: ctx.signal }),
});

/** The summary line: `path: MIME, S bytes, sha256 H`. */
function text(r: ToolResult): string {
  return `${shown(r.path)}: ${str(r.mimeType)}, ${r.size} bytes, sha256 ${r.sha256}`;
}

/** The summary line, then the payload as an image, audio or embedded resource block. */
function content(r: ToolResult, { audio }: ContentOptions): ContentBlock[] {
  const mimeType = str(r.mimeType);
  const data = str(r.data);
  const line: ContentBlock = { type: "text", text: text(r) };
  if (IMAGE_BLOCK_TYPES.includes(mimeType)) return [line, { type: "image", data, mimeType }];
  if (audio && AUDIO_BLOCK_TYPES.includes(mimeType)) {
    return [line, { type: "audio", data, mimeType }];
  }
  return [line, {
    type: "resource",
    resource: { uri: mediaUri(str(r.path)), mimeType, blob: data },
  }];
}

/** read_media as one unit (for people, the summary line only: the bytes are for programs). */
export const readMediaTool: ToolUnit = defineTool({
  operation,
  text,
  content,
  contentOnly: ["data"],
  examples: ["path=logo.png"],
});
