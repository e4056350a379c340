/**
 * What the SDK signs for FAPI 2.0 (docs/auth.md, "The SDK and the CLI"), through jose: a client
 * assertion per token request (`private_key_jwt`, RFC 7523) and a DPoP proof per request (RFC 9449)
 * with the session's own key pair, made once per session and never shared with another.
 */
import { createHash, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

/** What a key given to the SDK is, once read (src/sdk/private-key.ts). */
export type SigningKey = CryptoKey | KeyObject;

/** The algorithms a client assertion may be signed with: PS256, ES256 or EdDSA in a `fapi2` realm; RS256 too elsewhere. */
export type ClientSigningAlgorithm = 'PS256' | 'ES256' | 'EdDSA' | 'RS256';

/** A client's private key for `private_key_jwt`: the key, the `kid` it was registered with, and its algorithm. */
export interface ClientPrivateKey {
  /**
   * A PEM private key (string or Buffer: what `openssl` and `coregate` write), a node:crypto
   * KeyObject, a WebCrypto CryptoKey (jose's) or a private JWK. Checked when the client is made.
   */
  key: CryptoKey | KeyObject | string | Buffer | JWK;
  /** The `kid` of the registered public key (recommended: the server picks the key by it). */
  kid?: string;
  /** Default: the key's own (ES256 for P-256, EdDSA for Ed25519, PS256 for RSA). */
  alg?: ClientSigningAlgorithm;
}

/** A client's key as the SDK signs with it (src/sdk/private-key.ts `clientSigningKey`). */
export interface ClientSigningKey {
  key: SigningKey;
  alg: ClientSigningAlgorithm;
  kid: string | undefined;
}

/** The algorithms a DPoP key may have (docs/auth.md, "DPoP at the token endpoint"). */
export type DpopAlgorithm = 'ES256' | 'PS256' | 'EdDSA';

/** A client assertion for the realm `audience` (its issuer identifier), valid for 60 s. */
export function clientAssertion(clientId: string, audience: string, privateKey: ClientSigningKey, nowMs: number): Promise<string> {
  const now = Math.floor(nowMs / 1000);
  return new SignJWT({ jti: randomUUID() })
    .setProtectedHeader({ alg: privateKey.alg, ...(privateKey.kid === undefined ? {} : { kid: privateKey.kid }) })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(now + 60)
    .sign(privateKey.key);
}

/** A session's DPoP key pair: its public half goes in each proof's header, its thumbprint in the token's `cnf.jkt`. */
export class DpopKey {
  private constructor(
    readonly alg: DpopAlgorithm,
    readonly privateKey: CryptoKey | KeyObject,
    readonly publicJwk: JWK,
  ) {}

  static async generate(alg: DpopAlgorithm = 'ES256'): Promise<DpopKey> {
    const { privateKey, publicKey } = await generateKeyPair(alg);
    return new DpopKey(alg, privateKey, await exportJWK(publicKey));
  }

  /** A key pair the caller keeps (a file, an HSM's export): its public half is derived from the private one. */
  static async fromPrivateKey(privateKey: KeyObject, alg: DpopAlgorithm): Promise<DpopKey> {
    return new DpopKey(alg, privateKey, await exportJWK(createPublicKey(privateKey)));
  }

  /** A proof for one request: its method and URL (no query or fragment), the token's hash, the server's nonce. */
  proof(method: string, url: string, nowMs: number, options: { accessToken?: string | undefined; nonce?: string | undefined } = {}): Promise<string> {
    const target = new URL(url);
    const claims: Record<string, unknown> = { htm: method, htu: `${target.origin}${target.pathname}`, jti: randomUUID(), iat: Math.floor(nowMs / 1000) };
    if (options.accessToken !== undefined) claims.ath = sha256Base64url(options.accessToken);
    if (options.nonce !== undefined) claims.nonce = options.nonce;
    return new SignJWT(claims).setProtectedHeader({ alg: this.alg, typ: 'dpop+jwt', jwk: this.publicJwk }).sign(this.privateKey);
  }

  toJSON(): Record<string, unknown> {
    return { alg: this.alg };
  }
}

function sha256Base64url(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}
