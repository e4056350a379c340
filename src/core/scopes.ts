/**
 * The scopes a token must carry (one per business operation, docs/api.md, "Tokens"; the operator
 * API's own). In a module of their own, importing nothing, so that the CLI grants them without
 * loading the operations, their schemas or the HTTP layer.
 */
export const initiateScope = 'termDeposit:initiate';
export const retrieveScope = 'termDeposit:retrieve';
export const executeScope = 'merchandisingLoan:execute';
export const operatorScope = 'coregate:operator';
