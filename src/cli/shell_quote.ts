/** POSIX shell quoting of command lines the CLI prints for pasting (help examples, host notes). */

/**
 * One word for /bin/sh: as it is when it holds only characters no shell treats specially, else
 * single-quoted (a quote inside is closed, escaped and reopened). Any text, a server's included,
 * comes out as exactly one word.
 */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_\/.,:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
