/** PostgreSQL databases the bench creates and always drops: it never touches a database it did not make. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const defaultPgUrl = 'postgres://postgres@127.0.0.1:5432/test';

export async function postgresReachable(serverUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function withScratchDatabase<T>(serverUrl: string, purpose: string, work: (url: string) => Promise<T>): Promise<T> {
  const name = `coregate_bench_${purpose}_${randomBytes(5).toString('hex')}`;
  await admin(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  try {
    return await work(url.toString());
  } finally {
    await admin(serverUrl, `drop database if exists ${name} with (force)`);
  }
}

async function admin(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
