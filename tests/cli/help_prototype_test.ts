/** `help WORD` for a word that names an Object.prototype member is an unknown path, not its source. */
import assert from "node:assert/strict";
import { helpText } from "../../src/cli/help.ts";

Deno.test("helpText: constructor, toString and __proto__ are unknown paths", () => {
  for (const word of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
    assert.equal(helpText([word], "wmcp"), undefined, word);
  }
  assert.match(helpText(["serve"], "wmcp")!, /^Usage:\n {2}wmcp serve stdio\|http/);
});
