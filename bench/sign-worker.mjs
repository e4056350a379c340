// One signing loop of the "jose signing on all cores" baseline: signs a token shaped like
// coregate's for the given time and reports how many it signed.
import { parentPort, workerData } from 'node:worker_threads';
import { randomUUID } from 'node:crypto';
import { SignJWT, generateKeyPair } from 'jose';

const { alg, seconds } = workerData;
const { privateKey } = await generateKeyPair(alg);
const now = Math.floor(Date.now() / 1000);
const claims = { typ: 'Bearer', azp: 'bench-app', client_id: 'bench-app', scope: 'termDeposit:initiate termDeposit:retrieve merchandisingLoan:execute', preferred_username: 'service-account-bench-app', backbone_user: 'svc-bench', workstation: 'WS-BENCH-01' };
const deadline = performance.now() + seconds * 1000;
let signed = 0;
// Four signatures in flight per thread: WebCrypto signs in libuv's pool, this loop only encodes;
// with fewer the cores sat partly idle and the baseline was understated.
const loop = async () => {
  while (performance.now() < deadline) {
  await new SignJWT(claims)
    .setProtectedHeader({ alg, kid: 'k1', typ: 'JWT' })
    .setIssuer('http://127.0.0.1:8080/realms/bench')
    .setSubject('service-account')
    .setAudience('coregate-api')
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .setJti(randomUUID())
    .sign(privateKey);
  signed += 1;
  }
};
await Promise.all([loop(), loop(), loop(), loop()]);
parentPort.postMessage(signed);
