/**
 * The forms a client's private key may take in the SDK (`privateKey.key`), checked when the client
 * is made rather than at its first token request: a PEM string or Buffer (PKCS #8, or a
 * traditional RSA/EC key: what `coregate` and openssl write), a node:crypto KeyObject, a WebCrypto
 * CryptoKey (jose's), or a private JWK. Anything else, a public key, or a key that does not fit the
 * algorithm is refused with a CoregateAuthError that names the accepted forms.
 *
 * When no `alg` is given it follows from the key: ES256 for a P-256 key, EdDSA for Ed25519, PS256
 * for RSA (accepted in every realm, `fapi2` included; docs/auth.md).
 */
import { createPrivateKey, KeyObject, type JsonWebKey } from 'node:crypto';
import type { CryptoKey } from 'jose';
import { CoregateAuthError } from './errors.js';
import type { ClientPrivateKey, ClientSigningAlgorithm, SigningKey } from './proof-of-possession.js';

export const acceptedKeyForms = 'a PEM private key (string or Buffer), a node:crypto KeyObject, a WebCrypto CryptoKey or a private JWK';

/** The key to sign client assertions with, and its algorithm; throws a CoregateAuthError for a key it cannot use. */
export function clientSigningKey(privateKey: ClientPrivateKey): { key: SigningKey; alg: ClientSigningAlgorithm; kid: string | undefined } {
  const key = signingKeyOf(privateKey.key as unknown);
  const shape = shapeOf(key);
  const alg = privateKey.alg ?? shape.algs[0];
  if (alg === undefined || !shape.algs.includes(alg)) {
    throw refused(`privateKey.key is ${shape.description}, which cannot sign ${alg ?? 'any accepted algorithm'} (ES256 needs a P-256 key, EdDSA an Ed25519 key, PS256 and RS256 an RSA key)`);
  }
  return { key, alg, kid: privateKey.kid };
}

function signingKeyOf(value: unknown): SigningKey {
  if (typeof value === 'string' || Buffer.isBuffer(value)) {
    const text = value.toString();
    if (!text.includes('-----BEGIN')) throw refused(`privateKey.key is a string that is not PEM; give ${acceptedKeyForms}`);
    return privateKeyObject(() => createPrivateKey(text), 'a PEM that holds no usable private key (an encrypted key needs to be decrypted first; a public key cannot sign)');
  }
  if (value instanceof KeyObject) {
    if (value.type !== 'private') throw refused(`privateKey.key is a ${value.type} KeyObject; give the private key`);
    return value;
  }
  if (isCryptoKey(value)) {
    if (value.type !== 'private') throw refused(`privateKey.key is a ${value.type} CryptoKey; give the private key`);
    return value;
  }
  if (typeof value === 'object' && value !== null && typeof (value as JsonWebKey).kty === 'string') {
    if (typeof (value as JsonWebKey).d !== 'string') throw refused('privateKey.key is a public JWK (no "d"); give the private JWK');
    return privateKeyObject(() => createPrivateKey({ key: value as JsonWebKey, format: 'jwk' }), 'a JWK that node:crypto cannot read as a private key');
  }
  throw refused(`privateKey.key must be ${acceptedKeyForms}`);
}

function privateKeyObject(make: () => KeyObject, problem: string): KeyObject {
  let key: KeyObject;
  try {
    key = make();
  } catch {
    throw refused(`privateKey.key is ${problem}`);
  }
  if (key.type !== 'private') throw refused(`privateKey.key is ${problem}`);
  return key;
}

interface KeyShape {
  /** The algorithms the key can sign, the default first. */
  algs: readonly ClientSigningAlgorithm[];
  description: string;
}

const rsaAlgorithms: readonly ClientSigningAlgorithm[] = ['PS256', 'RS256'];

function shapeOf(key: SigningKey): KeyShape {
  if (key instanceof KeyObject) {
    const type = key.asymmetricKeyType;
    if (type === 'rsa') return { algs: rsaAlgorithms, description: 'an RSA key' };
    if (type === 'rsa-pss') return { algs: ['PS256'], description: 'an RSA-PSS key' };
    if (type === 'ed25519') return { algs: ['EdDSA'], description: 'an Ed25519 key' };
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (type === 'ec') return curve === 'prime256v1' ? { algs: ['ES256'], description: 'a P-256 key' } : { algs: [], description: `an EC key on ${curve ?? 'another curve'}` };
    return { algs: [], description: `a ${type ?? 'secret'} key` };
  }
  // A CryptoKey is bound to one WebCrypto algorithm: it signs that one's JWS algorithm only.
  const algorithm = key.algorithm as { name: string; namedCurve?: string };
  if (algorithm.name === 'RSA-PSS') return { algs: ['PS256'], description: 'an RSA-PSS CryptoKey' };
  if (algorithm.name === 'RSASSA-PKCS1-v1_5') return { algs: ['RS256'], description: 'an RSASSA-PKCS1-v1_5 CryptoKey' };
  if (algorithm.name === 'Ed25519') return { algs: ['EdDSA'], description: 'an Ed25519 CryptoKey' };
  if (algorithm.name === 'ECDSA' && algorithm.namedCurve === 'P-256') return { algs: ['ES256'], description: 'a P-256 CryptoKey' };
  return { algs: [], description: `a ${algorithm.name} CryptoKey` };
}

/** As jose tells one: by its tag, whichever realm's WebCrypto made it. */
function isCryptoKey(value: unknown): value is CryptoKey {
  return Object.prototype.toString.call(value) === '[object CryptoKey]';
}

function refused(description: string): CoregateAuthError {
  return new CoregateAuthError(0, 'invalid_client_key', description);
}
