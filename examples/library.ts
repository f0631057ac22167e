// Find up to 5 Markdown files under the current directory (read-only) and print them.
import { runOperation, Workspace } from "@wmcp/wmcp";

const workspace = await Workspace.open({ root: ".", writable: false });
const found = await runOperation({ workspace }, "find_files", { pattern: "*.md", maxResults: 5 });
console.log(found.matches);
