/**
 * Group commit for the embedded store. SQLite has one writer and, with synchronous=FULL, an
 * fsync per commit: committing each request's transaction on its own made the disk, not the
 * work, the limit. Units of work that arrive while a group runs wait for the next group; a group
 * runs them one after another in one transaction, each inside its own savepoint (a unit that
 * fails rolls back alone), commits once, and only then answers each of them: nobody is told
 * "done" before the commit that makes it durable. A group whose every unit asked for no sync
 * (`synced: false`, database.ts) commits without one (issue 42: the replay record's writes).
 */
import { systemClock } from '../../clock/system-clock.js';
import { sql } from 'kysely';
import type { RootQueries } from './root-queries.js';
import type { UnitOfWork } from './unit-of-work.js';

/** Units of work in one commit at most: bounds how long the last of a group waits. */
export const commitGroupSizeMax = 64;

interface Member<DB> {
  work: (unit: UnitOfWork<DB>) => Promise<unknown>;
  synced: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Settle = () => void;

export interface CommitGroupOptions {
  sizeMax?: number;
  /** Extra time a group waits for companions before it starts; 0: whoever arrived meanwhile. */
  windowMs?: number;
}

export class CommitGroup<DB> {
  readonly #db: RootQueries<DB>;
  readonly #sizeMax: number;
  readonly #windowMs: number;
  #queue: Array<Member<DB>> = [];
  #running = false;
  #scheduled = false;

  constructor(db: RootQueries<DB>, options: CommitGroupOptions = {}) {
    this.#db = db;
    this.#sizeMax = options.sizeMax ?? commitGroupSizeMax;
    this.#windowMs = options.windowMs ?? 0;
  }

  run<T>(work: (unit: UnitOfWork<DB>) => Promise<T>, options: { synced?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, synced: options.synced !== false, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#running || this.#scheduled || this.#queue.length === 0) return;
    this.#scheduled = true;
    const start = () => {
      this.#scheduled = false;
      void this.#runGroup();
    };
    // The window is real time whatever clock the service runs on: it gathers commits, not events.
    if (this.#windowMs > 0) systemClock.setTimeout(start, this.#windowMs);
    else setImmediate(start);
  }

  async #runGroup(): Promise<void> {
    this.#running = true;
    const group = this.#queue.splice(0, this.#sizeMax);
    const synced = group.some((member) => member.synced);
    try {
      const answers = group.length === 1 ? await this.#runAlone(group[0] as Member<DB>, synced) : await this.#runTogether(group, synced);
      for (const answer of answers) answer();
    } finally {
      this.#running = false;
      this.#schedule();
    }
  }

  /** One unit: its own transaction, no savepoint needed. */
  async #runAlone(member: Member<DB>, synced: boolean): Promise<Settle[]> {
    try {
      const value = await this.#db.inUnitOfWork((unit) => member.work(unit), { synced });
      return [() => member.resolve(value)];
    } catch (error) {
      return [() => member.reject(error)];
    }
  }

  async #runTogether(group: Array<Member<DB>>, synced: boolean): Promise<Settle[]> {
    const answers: Settle[] = [];
    try {
      await this.#db.inUnitOfWork(async (trx) => {
        for (const member of group) {
          await sql`savepoint group_member`.execute(trx);
          try {
            const value = await member.work(trx);
            await sql`release group_member`.execute(trx);
            answers.push(() => member.resolve(value));
          } catch (error) {
            await sql`rollback to group_member`.execute(trx);
            await sql`release group_member`.execute(trx);
            answers.push(() => member.reject(error));
          }
        }
      }, { synced });
      return answers;
    } catch (error) {
      // The commit failed: nothing of the group is durable, whatever each unit answered.
      return group.map((member) => () => member.reject(error));
    }
  }
}
