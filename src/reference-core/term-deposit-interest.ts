/** A term deposit contract with the interest expected at maturity: what the port answers of a contract (docs/term-deposits.md, "Decisions"). */
import type { TermDepositContract } from '../core/domain.js';
import type { TermDeposit } from '../core/port.js';
import { interestAtMaturityMinor } from '../core/term-deposits/interest.js';

export function withInterest(contract: TermDepositContract): TermDeposit {
  return {
    ...contract,
    expectedInterestMinor: interestAtMaturityMinor(contract.principalMinor, contract.ratePercent, contract.numberOfDays, contract.dayCount),
  };
}
