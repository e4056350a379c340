/**
 * Issue 24: "a commit whose answer was lost is found again, never executed twice". Between
 * coregate and PostgreSQL sits a proxy that, once armed, lets a COMMIT through, swallows
 * PostgreSQL's answer to it and cuts the connection: the transaction committed, and coregate
 * cannot know. The request is answered 503 (never 200 on a commit it did not see acknowledged,
 * never 500); its repeat with the same correlation id finds the operation and answers 409 naming
 * it, and the deposit moved money exactly once.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { dataFile, initiate, tokenOf } from '../helpers/database-cuts.js';
import { spawnCoregate } from '../helpers/processes.js';
import { storeTargets, withDb } from '../helpers/stores.js';
import { waitFor } from '../helpers/wait.js';

const postgres = storeTargets.find((target) => target.name === 'postgres');

/** The text of a COMMIT in a Parse or Query message of PostgreSQL's protocol. */
const commitText = Buffer.from('commit\0');
/**
 * What only an operation's own transaction sends: the background passes (outbox, leases, audit)
 * insert no operation. The insert is a named statement: its text travels once per connection in a
 * Parse message, after the name it is given; later runs send a Bind naming that statement.
 */
const operationInsertText = 'insert into "operations"';
const namedOperationInsert = /(coregate_\d+)\0insert into "operations"/;
const rollbackText = Buffer.from('rollback\0');

/**
 * A TCP proxy that, armed, cuts the first connection that commits a transaction which inserted an
 * operation, as soon as the server acknowledges the COMMIT, dropping that acknowledgement. Only
 * the operation's own COMMIT is taken: on a loaded machine the background passes' commits used to
 * come first and take the armed cut (CI, stop 32: ten attempts, none on the deposit's COMMIT).
 */
class CommitAnswerThief {
  armed = false;
  /** How many COMMITs were let through with their answers swallowed. */
  stolen = 0;
  /** The Bind of the operation insert's named statement, once a Parse has shown its name. */
  #operationInsertBind: Buffer | undefined;
  readonly #sockets = new Set<Socket>();

  private constructor(readonly server: Server) {}

  static async start(targetPort: number): Promise<CommitAnswerThief> {
    let thief!: CommitAnswerThief;
    const server = createServer((client) => thief.#pipe(client, targetPort));
    thief = new CommitAnswerThief(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return thief;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  #pipe(client: Socket, targetPort: number): void {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const socket of [client, upstream]) {
      this.#sockets.add(socket);
      socket.on('error', () => {});
      socket.once('close', () => this.#sockets.delete(socket));
    }
    let commitSent = false;
    // Whether the connection's open transaction inserted an operation since the proxy was armed.
    let carriesOperation = false;
    // The server's answers after the COMMIT was sent, parsed into messages: the transaction's
    // statements may travel with their COMMIT in one write (one Sync per batch), so the answers
    // before CommandComplete "COMMIT" are passed on and only the COMMIT's own is swallowed.
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      const named = namedOperationInsert.exec(text);
      if (named !== null) this.#operationInsertBind = Buffer.from(`\0${named[1]}\0`, 'latin1');
      const insertsOperation = text.includes(operationInsertText) || (this.#operationInsertBind !== undefined && chunk.includes(this.#operationInsertBind));
      if (this.armed && insertsOperation) carriesOperation = true;
      else if (chunk.includes(rollbackText)) carriesOperation = false;
      if (this.armed && carriesOperation && !commitSent && chunk.includes(commitText)) {
        this.armed = false;
        commitSent = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!commitSent) {
        client.write(chunk);
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      let offset = 0;
      while (pending.length - offset >= 5) {
        const length = pending.readInt32BE(offset + 1);
        if (pending.length - offset < 1 + length) break;
        const type = String.fromCharCode(pending[offset]!);
        const body = pending.subarray(offset + 5, offset + 1 + length);
        if (type === 'C' && body.toString('latin1').startsWith('COMMIT')) {
          // The server has committed: its answer never arrives.
          this.stolen += 1;
          client.destroy();
          upstream.destroy();
          return;
        }
        client.write(pending.subarray(offset, offset + 1 + length));
        offset += 1 + length;
      }
      pending = pending.subarray(offset);
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  }

  close(): void {
    for (const socket of this.#sockets) socket.destroy();
    this.server.close();
  }
}

test('a COMMIT whose answer is lost with its connection: 503, then the repeat finds the operation (409) and the money moved once', { skip: postgres?.skip, timeout: 120_000 }, async () => {
  const created = await postgres!.create();
  const target = new URL(created.url);
  const thief = await CommitAnswerThief.start(Number(target.port || 5432));
  const dbUrl = new URL(created.url);
  dbUrl.port = String(thief.port);
  // The background passes commit transactions of their own; idle, they leave the COMMIT to the request.
  const serve = await spawnCoregate(['serve', '--data', dataFile, '--db', dbUrl.toString(), '--reconcile-interval-ms', '3600000']);
  try {
    const token = await tokenOf(serve);
    // The cut may still miss (the COMMIT sent in a write the proxy reads apart): try until the deposit's own COMMIT is the one cut.
    let lost: { correlationId: string; reference: string } | undefined;
    for (let attempt = 0; attempt < 10 && lost === undefined; attempt += 1) {
      const correlationId = randomUUID();
      thief.armed = true;
      const answer = await initiate(serve, token, correlationId);
      thief.armed = false;
      assert.ok([200, 503].includes(answer.status as number), `200 or 503, never ${answer.status}: ${answer.body}`);
      if (answer.status !== 503) continue;
      assert.equal((JSON.parse(answer.body) as { reason: string }).reason, 'SERVICE_UNAVAILABLE');
      const operation = await withDb(created.url, (db) => db.selectFrom('operations').select(['reference', 'status']).where('correlation_id', '=', correlationId).executeTakeFirst());
      if (operation === undefined) continue;
      assert.equal(operation.status, 'Executed', 'the lost COMMIT did commit');
      lost = { correlationId, reference: operation.reference };
    }
    assert.ok(lost, `a deposit's COMMIT answer was lost in one of the attempts (${thief.stolen} answers swallowed)`);
    console.log(`# ${thief.stolen} COMMIT answer(s) swallowed to lose the deposit's own`);

    const repeat = await waitFor('the repeat answered', async () => {
      const answer = await initiate(serve, token, lost!.correlationId);
      return answer.status === 503 ? undefined : answer;
    }, 30_000);
    assert.equal(repeat.status, 409, repeat.body);
    assert.match(repeat.body, new RegExp(lost.reference), 'the 409 names the original operation');
    const movements = await withDb(created.url, (db) => db.selectFrom('movements').select('id').where('reference', '=', lost!.reference).execute());
    assert.equal(movements.length, 1, 'executed once');
    assert.equal(serve.child.exitCode, null, 'the process lives');
  } finally {
    await serve.stop('SIGTERM');
    thief.close();
    await created.drop();
  }
});
