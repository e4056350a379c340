/**
 * The rules of one operation reference (docs/core-port.md, "At most once", "Lookup by reference",
 * Fencing): a constitution executes with its contract; the same reference again, in sequence or at
 * once, answers the original outcome and moves money once; a lookup answers Executed, Rejected or
 * NotFound and never executes; a fence before the command closes the reference, a fence after an
 * execution changes nothing, and a fence racing a command lets exactly one of them win.
 */
import { randomUUID } from 'node:crypto';
import { daysBetween } from '../core/calendar-date.js';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import type { CoreOutcome, LoanInstallmentResult, TermDeposit } from '../core/port.js';
import { check, contractOf, describeOutcome, executed, executionOf, money, rejectedWith, same } from './checks.js';
import type { ConformanceRule } from './conformance-rule.js';

/** Calls made at once with one reference in the concurrency rule. */
const concurrentCallsCount = 5;
/** Rounds of a command racing its fence. */
const fenceRacesCount = 6;

export const operationRules: ConformanceRule[] = [
  {
    id: 'term-deposit.executes',
    title: 'a valid constitution is Executed with the contract (its reference, the command\'s terms, the product\'s day count), the source account is debited with the principal, and retrieveTermDeposit answers the contract',
    async run(context) {
      const reference = randomUUID();
      const command = context.deposit({ principalMinor: context.principalMinor + 1n });
      const source = { accountNumber: command.sourceAccount, openingMinor: undefined };
      const watch = await context.watch(context.records ? [source] : []);
      const contract = executed(await context.port.constituteTermDeposit(reference, command), 'TD', 'the constitution');
      const expect = (field: keyof TermDeposit, value: unknown) => same(contract[field], value, `the contract's ${field}`);
      check(typeof contract.contractNumber === 'string' && contract.contractNumber.length > 0, 'the contract has no number');
      expect('operationReference', reference);
      expect('customerReference', command.customerReference);
      expect('productCode', command.productCode);
      expect('componentCode', command.componentCode);
      expect('principalMinor', command.principalMinor);
      expect('currency', command.currency);
      expect('ratePercent', command.ratePercent);
      expect('dayCount', context.fixtures.product.dayCount);
      expect('valueDate', command.valueDate);
      expect('sourceAccount', command.sourceAccount);
      expect('interestAccount', command.interestAccount);
      expect('status', 'Active');
      check(contract.maturityDate > command.valueDate, `the maturity ${contract.maturityDate} is not after the value date ${command.valueDate}`);
      expect('numberOfDays', daysBetween(command.valueDate, contract.maturityDate));
      expect('description', command.description);
      if (context.records) await watch.expectMoved(source, -command.principalMinor, 'the source account is debited with the principal');
      else context.note('the debit is not read back (the core serves no read side): the at-most-once rules prove debits on accounts the kit loaded');
      same(contractOf(await context.port.retrieveTermDeposit(contract.contractNumber)), contractOf(contract), 'retrieveTermDeposit of the new contract');
      same(await context.port.retrieveTermDeposit(`CK-NO-SUCH-${randomUUID().slice(0, 8)}`), undefined, 'retrieveTermDeposit of an unknown contract number');
    },
  },
  {
    id: 'at-most-once.sequential',
    title: 'at most once per reference: the same reference again, whatever its body, answers the original outcome without a second movement (term deposits and loan installments)',
    async run(context) {
      const source = context.account('onceDeposit');
      const payment = context.account('oncePayment');
      const expense = context.account('onceExpense');
      const watch = await context.watch([source, payment, expense]);

      const reference = randomUUID();
      const principal = context.principalMinor;
      const first = executed(await context.port.constituteTermDeposit(reference, context.deposit({ sourceAccount: source.accountNumber, principalMinor: principal })), 'TD', 'the first constitution');
      // The repeat carries another amount: the reference, not the body, identifies the operation.
      const again = await context.port.constituteTermDeposit(reference, context.deposit({ sourceAccount: source.accountNumber, principalMinor: principal + 1n }));
      same(contractOf(executed(again, 'TD', 'the same reference again')), contractOf(first), 'the same reference again answers the original contract');
      same(contractOf(executed(await context.port.findTermDepositConstitution(reference), 'TD', 'the lookup')), contractOf(first), 'the lookup answers the original contract');

      const loanReference = randomUUID();
      const paid = executed(
        await context.port.executeLoanInstallment(loanReference, context.installment({ paymentAccount: payment.accountNumber, expenseAccount: expense.accountNumber })),
        'ML',
        'the first installment payment',
      );
      const paidAgain = await context.port.executeLoanInstallment(loanReference, context.installment({ amountMinor: 2n, paymentAccount: payment.accountNumber, expenseAccount: expense.accountNumber }));
      same(executionOf(executed(paidAgain, 'ML', 'the same reference again')), executionOf(paid), 'the same loan reference again answers the original result');

      await watch.expectMoves([
        [source, -principal, 'the deposit\'s source account is debited once'],
        [payment, -paid.amountMinor, 'the payment account pays the installment once'],
        [expense, -(paid.commissionMinor + paid.feeMinor + paid.taxMinor), 'the expense account pays the charges once'],
      ]);
    },
  },
  {
    id: 'at-most-once.concurrent',
    title: `at most once under a race: ${concurrentCallsCount} concurrent calls with one reference execute once and all answer the one outcome (term deposits and loan installments)`,
    async run(context) {
      const source = context.account('raceDeposit');
      const payment = context.account('racePayment');
      const expense = context.account('raceExpense');
      const watch = await context.watch([source, payment, expense]);
      const principal = context.principalMinor;

      const reference = randomUUID();
      const deposits = await Promise.all(
        Array.from({ length: concurrentCallsCount }, () => context.port.constituteTermDeposit(reference, context.deposit({ sourceAccount: source.accountNumber, principalMinor: principal }))),
      );
      const contracts = deposits.map((outcome, index) => contractOf(executed(outcome, 'TD', `concurrent call ${index + 1}`)));
      for (const [index, contract] of contracts.entries()) same(contract, contracts[0], `concurrent call ${index + 1} answers the one contract`);

      const loanReference = randomUUID();
      const payments: Array<CoreOutcome<LoanInstallmentResult>> = await Promise.all(
        Array.from({ length: concurrentCallsCount }, () =>
          context.port.executeLoanInstallment(loanReference, context.installment({ paymentAccount: payment.accountNumber, expenseAccount: expense.accountNumber })),
        ),
      );
      const results = payments.map((outcome, index) => executed(outcome, 'ML', `concurrent loan call ${index + 1}`));
      for (const [index, result] of results.entries()) same(executionOf(result), executionOf(results[0]), `concurrent loan call ${index + 1} answers the one result`);
      const [paid] = results as [LoanInstallmentResult];

      await watch.expectMoves([
        [source, -principal, 'the deposit\'s source account is debited once'],
        [payment, -paid.amountMinor, 'the payment account pays once'],
        [expense, -(paid.commissionMinor + paid.feeMinor + paid.taxMinor), 'the expense account pays the charges once'],
      ]);
    },
  },
  {
    id: 'lookups',
    title: 'lookup by reference: Executed with the result, Rejected with the refusal, NotFound for a reference never executed; a lookup never executes (term deposits and loan installments)',
    async run(context) {
      const { port } = context;
      const done = randomUUID();
      const contract = executed(await port.constituteTermDeposit(done, context.deposit()), 'TD', 'the constitution');
      same(contractOf(executed(await port.findTermDepositConstitution(done), 'TD', 'the lookup of an executed reference')), contractOf(contract), 'the lookup answers the result');

      // An unknown source account: the one rule the command breaks (an unknown customer's accounts would not be its own either).
      const refused = randomUUID();
      const unknownAccount = `CK-NO-SUCH-${randomUUID().slice(0, 8)}`;
      const refusal = rejectedWith(await port.constituteTermDeposit(refused, context.deposit({ sourceAccount: unknownAccount })), E.sourceAccountNotFound, 'TD', 'a constitution from an unknown source account');
      same(rejectedWith(await port.findTermDepositConstitution(refused), E.sourceAccountNotFound, 'TD', 'the lookup of a refused reference').message, refusal.message, 'the lookup answers the refusal\'s message');
      same(await port.findTermDepositConstitution(randomUUID()), { status: 'NotFound' }, 'the lookup of a reference never executed');

      // A lookup first, then the command: the lookup executed nothing, the command executes once.
      const account = context.account('lookup');
      const watch = await context.watch([account]);
      const later = randomUUID();
      same(await port.findTermDepositConstitution(later), { status: 'NotFound' }, 'the lookup of a reference not yet executed');
      same(await port.findTermDepositConstitution(later), { status: 'NotFound' }, 'a second lookup (the first executed nothing)');
      executed(await port.constituteTermDeposit(later, context.deposit({ sourceAccount: account.accountNumber })), 'TD', 'the command after the lookups');
      executed(await port.findTermDepositConstitution(later), 'TD', 'the lookup after the command');
      await watch.expectMoved(account, -context.principalMinor, 'looked up twice and executed once: debited once');

      const loanDone = randomUUID();
      const paid = executed(await port.executeLoanInstallment(loanDone, context.installment()), 'ML', 'the installment payment');
      same(executionOf(executed(await port.findLoanInstallmentExecution(loanDone), 'ML', 'the loan lookup of an executed reference')), executionOf(paid), 'the loan lookup answers the result');
      const loanRefused = randomUUID();
      const loanRefusal = rejectedWith(await port.executeLoanInstallment(loanRefused, context.installment({ sequence: 999_999 })), E.installmentNotFound, 'ML', 'a payment of an unknown installment');
      same(rejectedWith(await port.findLoanInstallmentExecution(loanRefused), E.installmentNotFound, 'ML', 'the loan lookup of a refused reference').message, loanRefusal.message, 'the loan lookup answers the refusal\'s message');
      same(await port.findLoanInstallmentExecution(randomUUID()), { status: 'NotFound' }, 'the loan lookup of a reference never executed');
    },
  },
  {
    id: 'fencing.before',
    title: 'fencing: a reference fenced before its command never executes — the command is Rejected NOT_EXECUTED (TD-502-002, ML-502-002), nothing moves, and the lookups say so',
    async run(context) {
      const { port } = context;
      const account = context.account('fenceBefore');
      const watch = await context.watch([account]);
      const reference = randomUUID();
      await port.fenceOperation(reference);
      rejectedWith(await port.constituteTermDeposit(reference, context.deposit({ sourceAccount: account.accountNumber })), E.notExecuted, 'TD', 'a constitution under a fenced reference');
      rejectedWith(await port.findTermDepositConstitution(reference), E.notExecuted, 'TD', 'the lookup of the fenced reference');
      rejectedWith(await port.findLoanInstallmentExecution(reference), E.notExecuted, 'ML', 'the loan lookup of the fenced reference');

      const loanReference = randomUUID();
      await port.fenceOperation(loanReference);
      rejectedWith(
        await port.executeLoanInstallment(loanReference, context.installment({ paymentAccount: account.accountNumber, expenseAccount: account.accountNumber })),
        E.notExecuted,
        'ML',
        'an installment payment under a fenced reference',
      );
      rejectedWith(await port.findLoanInstallmentExecution(loanReference), E.notExecuted, 'ML', 'the loan lookup of the fenced reference');
      await watch.expectMoved(account, 0n, 'nothing moves under a fenced reference');
    },
  },
  {
    id: 'fencing.after-execution',
    title: 'fencing: a reference that executed stays Executed when fenced afterwards, and fencing twice is harmless',
    async run(context) {
      const { port } = context;
      const reference = randomUUID();
      const contract = executed(await port.constituteTermDeposit(reference, context.deposit()), 'TD', 'the constitution');
      await port.fenceOperation(reference);
      await port.fenceOperation(reference);
      same(contractOf(executed(await port.findTermDepositConstitution(reference), 'TD', 'the lookup after two fences')), contractOf(contract), 'the lookup after the fences answers the contract');
      same(contractOf(executed(await port.constituteTermDeposit(reference, context.deposit()), 'TD', 'the command again after the fences')), contractOf(contract), 'the command again answers the contract');

      const loanReference = randomUUID();
      const paid = executed(await port.executeLoanInstallment(loanReference, context.installment()), 'ML', 'the installment payment');
      await port.fenceOperation(loanReference);
      same(executionOf(executed(await port.findLoanInstallmentExecution(loanReference), 'ML', 'the loan lookup after the fence')), executionOf(paid), 'the loan lookup after the fence answers the result');
    },
  },
  {
    id: 'fencing.race',
    title: `fencing: a fence racing a late command — exactly one of the two wins (${fenceRacesCount} rounds): the command is Executed, or Rejected NOT_EXECUTED with nothing moved, and the lookup agrees`,
    async run(context) {
      const { port } = context;
      const account = context.account('fenceRace');
      const watch = await context.watch([account]);
      const principal = context.principalMinor;
      let executions = 0;
      for (let round = 0; round < fenceRacesCount; round += 1) {
        const reference = randomUUID();
        const command = () => port.constituteTermDeposit(reference, context.deposit({ sourceAccount: account.accountNumber, principalMinor: principal }));
        // Both calls at once; half the rounds send the fence first. Either may reach the core first.
        const outcome = round % 2 === 0 ? (await Promise.all([command(), port.fenceOperation(reference)]))[0] : (await Promise.all([port.fenceOperation(reference), command()]))[1];
        const lookup = await port.findTermDepositConstitution(reference);
        if (outcome.status === 'Executed') {
          executions += 1;
          same(contractOf(executed(lookup, 'TD', `round ${round + 1}: the lookup after the command won`)), contractOf(outcome.result), `round ${round + 1}: the lookup agrees with the executed command`);
        } else {
          rejectedWith(outcome, E.notExecuted, 'TD', `round ${round + 1}: the command that lost to the fence`);
          rejectedWith(lookup, E.notExecuted, 'TD', `round ${round + 1}: the lookup after the fence won`);
        }
        check(outcome.status === lookup.status, `round ${round + 1}: the command answered ${describeOutcome(outcome, 'TD')}, the lookup ${describeOutcome(lookup, 'TD')}`);
      }
      context.note(`${executions} of ${fenceRacesCount} commands won their race`);
      await watch.expectMoved(account, -principal * BigInt(executions), `only the ${executions} executed commands moved money (${money(principal, context.currency)} each)`);
    },
  },
];
