/** Served directly, TLS is 1.2 or higher (--tls-cert / --tls-key; docs/deployment.md, "TLS"). */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { demo, startTestServer, type TestServer } from '../helpers/server.js';

function openssl(args: string[]): boolean {
  try {
    execFileSync('openssl', args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'coregate-tls-'));
const certFile = join(dir, 'cert.pem');
const keyFile = join(dir, 'key.pem');
// The key is made per run and removed afterwards: no private key lives in the repository.
const made = openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1', '-keyout', keyFile, '-out', certFile]);

describe('TLS 1.2 or higher', { skip: made ? undefined : 'openssl is not available to make a test certificate' }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ db: `sqlite:${join(dir, 'tls.db')}`, flags: { tlsCert: certFile, tlsKey: keyFile } });
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the server speaks HTTPS: a token request over TLS 1.2+ succeeds', async () => {
    assert.match(server.url, /^https:\/\//);
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: demo.treasury.clientId, client_secret: demo.treasury.secret }).toString();
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        server.tokenUrl(),
        { method: 'POST', ca: readFileSync(certFile), headers: { 'content-type': 'application/x-www-form-urlencoded' }, minVersion: 'TLSv1.2' },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    assert.equal(status, 200);
    assert.equal(JSON.parse(text).token_type, 'Bearer');
  });

  test('a client limited to TLS 1.1 is refused by the server', async () => {
    const port = Number(new URL(server.url).port);
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, ca: readFileSync(certFile), minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' }, () => {
        resolve(`connected with ${socket.getProtocol()}`);
        socket.end();
      });
      socket.on('error', (error) => resolve(`refused: ${error.message}`));
    });
    assert.match(outcome, /^refused/);
  });

  test('the same client accepts TLS 1.2 (the refusal above is the version, not the handshake)', async () => {
    const port = Number(new URL(server.url).port);
    const protocol = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, ca: readFileSync(certFile), minVersion: 'TLSv1.2', ciphers: 'DEFAULT@SECLEVEL=0' }, () => {
        resolve(socket.getProtocol() ?? '');
        socket.end();
      });
      socket.on('error', reject);
    });
    assert.match(protocol, /^TLSv1\.[23]$/);
  });
});
