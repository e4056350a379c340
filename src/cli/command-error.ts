/** An operator command refused with a message for the person at the terminal (exit code 2). */
export class CommandError extends Error {}
