/**
 * What a `coregate` command reads and writes besides its flags: the environment it takes defaults
 * and secrets from, its output streams, its input and its clock. The `coregate` process hands its
 * own (`processIo`); a test runs the same program inside its process with captured streams, an
 * environment of its own (test/helpers/cli.ts) and, when it wants, a fake clock, as fastify's
 * `inject` runs a route without a socket. An operator command never reads `process.env`,
 * `process.stdout`, `process.stdin` or the wall clock itself; `serve` and `core serve` own their
 * process (its environment, signals and exit) and run as one.
 */
import { text } from 'node:stream/consumers';
import { systemClock } from '../clock/system-clock.js';
import type { Clock } from '../core/clock.js';

/** The variables a command reads: COREGATE_DB, COREGATE_MASTER_KEY, COREGATE_CLIENT_SECRET, ... */
export type CommandEnv = Readonly<Record<string, string | undefined>>;

/** A command's standard input: a terminal (a prompt may ask) or a pipe (read to its end). */
export type CommandInput = NodeJS.ReadableStream & { readonly isTTY?: boolean };

export interface CommandIo {
  readonly env: CommandEnv;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly stdin: CommandInput;
  /**
   * The time every command reads and the timers it sets (src/core/clock.ts): program.ts hands it
   * to each command with its flags. The system's when none is given.
   */
  readonly clock?: Clock;
}

/** The `coregate` process's own environment, streams and clock. */
export function processIo(): CommandIo {
  return { env: process.env, stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, clock: systemClock };
}

/** What every command's flags carry besides its options, set by program.ts before the command runs. */
export interface CommandContext {
  /** The command's environment (COREGATE_DB, COREGATE_MASTER_KEY, COREGATE_CLIENT_SECRET, ...). */
  env: CommandEnv;
  /** The command's clock: the time it stamps, compares and waits by (CommandIo.clock). */
  clock: Clock;
}

/** Prints a line, or a value as indented JSON. */
export function print(io: CommandIo, value: unknown): void {
  io.stdout.write(typeof value === 'string' ? `${value}\n` : `${JSON.stringify(value, null, 2)}\n`);
}

/** Prints to one command's standard output: `print` bound to its io. */
export type Printer = (value: unknown) => void;

export function printerOf(io: CommandIo): Printer {
  return (value) => print(io, value);
}

/** Standard input read to its end (`--file -`). */
export function readInput(io: CommandIo): Promise<string> {
  return text(io.stdin);
}

/** Rows in columns padded to their widest cell, under a header. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  return [header, ...rows].map((row) => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()).join('\n');
}

/** Labelled values, one a line, the values aligned after the widest label: a record a person reads. */
export function fields(rows: ReadonlyArray<readonly [label: string, value: string]>): string {
  const width = Math.max(0, ...rows.map(([label]) => label.length + 1));
  return rows.map(([label, value]) => `${`${label}:`.padEnd(width)}  ${value}`.trimEnd()).join('\n');
}
