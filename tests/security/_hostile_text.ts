/** The hostile text every string of tests/security/_hostile_server.ts carries. */
export const EVIL = [
  "\x1b]0;pwned\x07", // OSC 0: the window title
  "\x1b]52;c;cHduZWQ=\x07", // OSC 52: a clipboard write
  "\x1b[31mRED\x1b[0m", // SGR colours
  "\x1b[2A\x1b[2K", // cursor up, erase line
  "\x9b1m", // a C1 CSI
  "\u202eDESREVER", // a bidi override
  "\u2028SEP",
  "\rACCEPT", // back to the start of the line
  "\nSECOND LINE",
].join("");
