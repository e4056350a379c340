/** Savepoint statements for the store's drivers, as Kysely's own drivers build them: the compiler quotes the name. */
import { IdentifierNode, RawNode, createQueryId, type DatabaseConnection, type QueryCompiler } from 'kysely';

export async function runSavepointCommand(connection: DatabaseConnection, command: 'savepoint' | 'rollback to' | 'release', name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
  const node = RawNode.createWithChildren([RawNode.createWithSql(`${command} `), IdentifierNode.create(name)]);
  await connection.executeQuery(compile(node, createQueryId()));
}
