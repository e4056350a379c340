/**
 * The options many commands share, one definition each so that their flag and help read the same
 * everywhere. Each call makes a new Option: commander keeps a parse's value on its option.
 */
import { Option } from 'commander';

export const dbOption = () => new Option('--db <url>', 'store: sqlite:PATH or postgres://... (env COREGATE_DB)');
export const realmOption = () => new Option('--realm <realm>', 'realm name (required)').makeOptionMandatory();
export const jsonOption = () => new Option('--json', 'print JSON for scripts');
export const coreUrlOption = () => new Option('--core-url <url>', 'a remote core (coregate core serve) answers, through its protocol (env COREGATE_CORE_URL); default: the embedded core on --db');
