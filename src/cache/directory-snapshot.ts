/**
 * The core's directory (users and workstations) as the business API's guards read it: asked of
 * the core at most once a second per login or workstation, instead of on every request (with a
 * remote core that was an HTTP call per request). A user disabled in the core is refused within
 * `directorySnapshotMaxAgeMs` (docs/deployment.md, "What an instance keeps in memory").
 */
import type { Clock } from '../core/clock.js';
import type { CoreBankingPort, DirectoryStatus } from '../core/port.js';
import { Snapshot } from './snapshot.js';

export const directorySnapshotMaxAgeMs = 1_000;
/** Logins and workstations remembered; a bank has thousands of each at most. */
export const directoryEntriesMax = 20_000;

export type Directory = Pick<CoreBankingPort, 'userStatus' | 'workstationStatus'>;

export class DirectorySnapshot implements Directory {
  readonly #users: Snapshot<string, DirectoryStatus>;
  readonly #workstations: Snapshot<string, DirectoryStatus>;

  constructor(core: Directory, clock: Clock, maxAgeMs = directorySnapshotMaxAgeMs) {
    const options = { maxAgeMs, entriesMax: directoryEntriesMax, clock };
    this.#users = new Snapshot((login) => core.userStatus(login), options);
    this.#workstations = new Snapshot((id) => core.workstationStatus(id), options);
  }

  userStatus(login: string): Promise<DirectoryStatus> {
    return this.#users.get(login);
  }

  workstationStatus(id: string): Promise<DirectoryStatus> {
    return this.#workstations.get(id);
  }

  /** The status as `userStatus` would answer it, when it is in the snapshot and fresh (Snapshot.peek); undefined otherwise. */
  peekUserStatus(login: string): { value: DirectoryStatus } | undefined {
    return this.#users.peek(login);
  }

  peekWorkstationStatus(id: string): { value: DirectoryStatus } | undefined {
    return this.#workstations.peek(id);
  }
}
