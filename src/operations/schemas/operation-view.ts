/** GET /v1/operations/{reference}'s answer: an operation's state, of any registered operation (src/operations/registry.ts). */
import { Type, type Static } from '@sinclair/typebox';
import { operationNames } from '../registry.js';
import { ErrorRecordSchema } from './common.js';

export const OperationViewSchema = Type.Object(
  {
    reference: Type.String(),
    operation: Type.String({ description: operationNames.join(' or ') }),
    status: Type.Union([Type.Literal('Pending'), Type.Literal('Executed'), Type.Literal('Rejected')]),
    result: Type.Optional(Type.Unknown({ description: 'The operation\'s 200 body, once executed' })),
    error: Type.Optional(ErrorRecordSchema),
  },
  { $id: 'OperationView' },
);

export type OperationView = Static<typeof OperationViewSchema>;
