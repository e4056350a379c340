/**
 * What a core sent, made safe to print (docs/conformance.md, "Reading a failure"): the kit shows
 * up to 2,000 characters of each answer on the operator's terminal and in TAP, and a hostile or
 * broken core must not drive that terminal. Control characters (C0, DEL, C1 — ESC starts every
 * ANSI escape sequence, 0x9B is CSI on its own), the line and paragraph separators and the
 * bidirectional overrides are shown escaped (`\x1b`, `\u202e`) rather than written.
 */

/** The characters shown escaped; a line break only where the text is one line of output. */
const unsafe = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g;
const unsafeWithNewline = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g;

function escaped(char: string): string {
  const code = char.charCodeAt(0);
  if (char === '\n') return '\\n';
  if (char === '\r') return '\\r';
  if (char === '\t') return '\\t';
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** One line: every control character escaped, line breaks included. */
export function printableLine(text: string): string {
  return text.replace(unsafeWithNewline, escaped);
}

/** Lines: the line breaks kept (the kit's own messages are several lines), every other control character escaped. */
export function printableLines(text: string): string {
  return text.replace(unsafe, escaped);
}
