/**
 * Encryption at rest for the store's secrets (signing keys, the client-secret hash key).
 * With COREGATE_MASTER_KEY set, values are sealed with AES-256-GCM under a key derived by HKDF;
 * without it they are stored as given and the operator is warned at start.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const sealedPrefix = 'enc:v1:';
/** A master key shorter than this is refused: HKDF adds no entropy to a weak input. */
export const masterKeyCharsMin = 32;
const ivBytes = 12;
const tagBytes = 16;

export class Vault {
  readonly #key: Buffer | undefined;

  constructor(masterKey: string | undefined) {
    if (masterKey !== undefined && masterKey !== '') {
      if (masterKey.length < masterKeyCharsMin) {
        throw new Error(`COREGATE_MASTER_KEY must have at least ${masterKeyCharsMin} characters (e.g. 32 random bytes in base64)`);
      }
      this.#key = Buffer.from(hkdfSync('sha256', masterKey, 'coregate', 'store-secrets-v1', 32));
    }
  }

  get encrypting(): boolean {
    return this.#key !== undefined;
  }

  seal(plaintext: string): string {
    if (!this.#key) return plaintext;
    const iv = randomBytes(ivBytes);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return sealedPrefix + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  open(stored: string): string {
    if (!stored.startsWith(sealedPrefix)) return stored;
    if (!this.#key) {
      throw new Error('The store holds encrypted secrets: set COREGATE_MASTER_KEY to the master key they were sealed with');
    }
    const raw = Buffer.from(stored.slice(sealedPrefix.length), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, ivBytes));
    decipher.setAuthTag(raw.subarray(ivBytes, ivBytes + tagBytes));
    try {
      return Buffer.concat([decipher.update(raw.subarray(ivBytes + tagBytes)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('COREGATE_MASTER_KEY does not open the store\'s encrypted secrets (wrong master key?)');
    }
  }
}
