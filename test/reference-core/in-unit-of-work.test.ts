/**
 * The embedded core inside the caller's unit of work (ReferenceCore.within): the reference's record
 * and the operation's reads go out together, and no write runs before the record is known to be new
 * (src/reference-core/writes-after-record.ts). At most once (docs/core-port.md, "At most once"): a
 * repeat, a fenced reference and a race of the same reference each write nothing twice, on each
 * store.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLogger } from '../../src/log.js';
import { openReferenceCore } from '../../src/core-http/core-service.js';
import type { CoreRepository } from '../../src/reference-core/repository.js';
import { ReferenceNotNew, writesAfterRecord } from '../../src/reference-core/writes-after-record.js';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { inUnitOfWork } from '../../src/store/unit-of-work.js';
import { errorCatalogue as E } from '../../src/core/error-catalogue.js';
import { storeTargets, embedded } from '../helpers/stores.js';
import { conformanceDataFile, deposit } from '../port/conformance.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';

describe('writes after the record (unit)', () => {
  /** A repository whose every method notes its call and answers at once. */
  function noting(calls: string[]): CoreRepository {
    return new Proxy({} as CoreRepository, {
      get: (_target, name) => async () => {
        calls.push(String(name));
        return undefined;
      },
    });
  }

  test('reads and locks run before the record is known; writes wait for it', async () => {
    const calls: string[] = [];
    let settle!: (isNew: boolean) => void;
    const recorded = new Promise<boolean>((resolve) => (settle = resolve));
    const repository = writesAfterRecord(noting(calls), recorded);
    const reads = Promise.all([repository.findCustomer('C1'), repository.lockAccounts(['1']), repository.businessDate(), repository.findProduct('P', 'C')]);
    const write = repository.postMovement({ id: 'm', reference: 'r', kind: 'k', description: 'd', businessDate: '2026-01-01', lines: [] });
    await reads;
    assert.deepEqual(calls, ['findCustomer', 'lockAccounts', 'businessDate', 'findProduct'], 'the reads ran, the write waits');
    settle(true);
    await write;
    assert.deepEqual(calls.at(-1), 'postMovement', 'the write ran once the record was new');
  });

  test('for a reference that has an outcome, every write fails without reaching the store; a method not listed as a read is a write', async () => {
    const calls: string[] = [];
    const repository = writesAfterRecord(noting(calls), Promise.resolve(false));
    await assert.rejects(repository.openAccount({ accountNumber: 'a', customerReference: 'c', currency: 'USD', status: 'Active', kind: 'k' }), ReferenceNotNew);
    await assert.rejects(repository.insertTermDeposit({} as never), ReferenceNotNew);
    await assert.rejects(repository.recordInstallmentPayment('L', 1, 1n), ReferenceNotNew);
    await assert.rejects((repository as unknown as { someNewMethod: () => Promise<void> }).someNewMethod(), ReferenceNotNew);
    await repository.findAccount('1');
    assert.deepEqual(calls, ['findAccount']);
  });

  test('a record that fails fails the writes with its own error', async () => {
    const failure = new Error('the record failed');
    const recorded = Promise.reject(failure);
    recorded.catch(() => undefined);
    const repository = writesAfterRecord(noting([]), recorded);
    await assert.rejects(repository.postMovement({} as never), (error) => error === failure);
  });
});

for (const target of storeTargets) {
  describe(`embedded core within a unit of work [${target.name}]`, { skip: target.skip }, () => {
    async function withCore(work: (parts: Awaited<ReturnType<typeof openReferenceCore>>) => Promise<void>): Promise<void> {
      const created = await target.create();
      const parts = await openReferenceCore({ db: created.url, dataFile: conformanceDataFile, businessDate: undefined }, createLogger({ level: 'silent' }));
      try {
        await work(parts);
      } finally {
        await parts.store.close();
        await created.drop();
      }
    }
    const movementsOf = async (parts: Awaited<ReturnType<typeof openReferenceCore>>, reference: string) =>
      (await embedded(parts.store.db).selectFrom('movements').select('id').where('reference', '=', reference).execute()).length;
    const balanceOf = async (parts: Awaited<ReturnType<typeof openReferenceCore>>, account: string) => (await findAccount(coreTablesOf(parts.store.db), account))?.balanceMinor;

    test('at most once: the same reference again answers the first result and moves nothing more, even with another command', async () => {
      await withCore(async (parts) => {
        const { store, core } = parts;
        const command = deposit();
        const before = await balanceOf(parts, command.sourceAccount);
        const first = await inUnitOfWork(store, (unit) => core.within(unit).constituteTermDeposit('REF-UOW-1', command));
        assert.equal(first.status, 'Executed');
        const again = await inUnitOfWork(store, (unit) => core.within(unit).constituteTermDeposit('REF-UOW-1', deposit({ principalMinor: 999_000n })));
        assert.equal(again.status, 'Executed');
        assert.deepEqual((again as { result: { contractNumber: string } }).result.contractNumber, (first as { result: { contractNumber: string } }).result.contractNumber);
        assert.equal(await movementsOf(parts, 'REF-UOW-1'), 1, 'one movement for the reference');
        assert.equal(await balanceOf(parts, command.sourceAccount), (before ?? 0n) - command.principalMinor, 'debited once');
        const contracts = await embedded(store.db).selectFrom('term_deposits').select('contract_number').where('operation_reference', '=', 'REF-UOW-1').execute();
        assert.equal(contracts.length, 1, 'one contract');
      });
    });

    test('at most once: a fenced reference never executes in a unit of work: Rejected NOT_EXECUTED, nothing written', async () => {
      await withCore(async (parts) => {
        const { store, core } = parts;
        const command = deposit();
        const before = await balanceOf(parts, command.sourceAccount);
        await core.fenceOperation('REF-UOW-FENCED');
        const outcome = await inUnitOfWork(store, (unit) => core.within(unit).constituteTermDeposit('REF-UOW-FENCED', command));
        assert.equal(outcome.status, 'Rejected');
        assert.deepEqual((outcome as { refusal: { entry: unknown } }).refusal.entry, E.notExecuted);
        assert.equal(await movementsOf(parts, 'REF-UOW-FENCED'), 0);
        assert.equal(await balanceOf(parts, command.sourceAccount), before);
        const accounts = await embedded(store.db).selectFrom('term_deposits').select('contract_number').where('operation_reference', '=', 'REF-UOW-FENCED').execute();
        assert.equal(accounts.length, 0);
      });
    });

    test('at most once: a race of one reference in four units of work executes it once', async () => {
      await withCore(async (parts) => {
        const { store, core } = parts;
        const command = deposit();
        const before = await balanceOf(parts, command.sourceAccount);
        const outcomes = await Promise.allSettled(
          Array.from({ length: 4 }, () => inUnitOfWork(store, (unit) => core.within(unit).constituteTermDeposit('REF-UOW-RACE', command))),
        );
        const executed = outcomes.filter((outcome) => outcome.status === 'fulfilled' && outcome.value.status === 'Executed');
        assert.ok(executed.length >= 1, 'it executed');
        assert.equal(await movementsOf(parts, 'REF-UOW-RACE'), 1, 'one movement whatever the interleaving');
        assert.equal(await balanceOf(parts, command.sourceAccount), (before ?? 0n) - command.principalMinor);
      });
    });
  });
}
