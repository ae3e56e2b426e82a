import type { CryptoKey } from 'jose'

/** Server-side secrets kept in DATA_DIR, generated on first start (mode 0600). */
export interface Secrets {
  /** 32-byte key-encryption key that wraps per-account data keys. */
  master_key: Buffer
  /** 32-byte key for blind indexes (HMAC of e-mail addresses in claim stream names). */
  index_key: Buffer
  /** 32-byte key for hashing short codes (confirmation codes), so hashes cannot be brute-forced offline. */
  code_key: Buffer
  jwt: { private_key: CryptoKey; public_key: CryptoKey; kid: string }
}
