import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { makePrivateDir } from '../private-files.ts'
import { join } from 'node:path'
import { createHmac, randomBytes } from 'node:crypto'
import type { Secrets } from '../../lib/crypto/secrets.ts'
import { generateKeyPair, exportPKCS8, exportSPKI, importPKCS8, importSPKI } from 'jose'

function loadOrCreate(file: string, create: () => string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8')
  const text = create()
  writeFileSync(file, text, { mode: 0o600, flag: 'wx' })
  return text
}

/**
 * Loads the secrets from `dataDir`, creating missing ones (0600, in a directory made 0700).
 * Files: `secrets.json` (symmetric keys, base64) and `jwt-ed25519.pem` / `.pub.pem`.
 */
export async function loadSecrets(dataDir: string): Promise<Secrets> {
  makePrivateDir(dataDir)
  const sym = JSON.parse(
    loadOrCreate(join(dataDir, 'secrets.json'), () =>
      JSON.stringify(
        {
          master_key: randomBytes(32).toString('base64'),
          index_key: randomBytes(32).toString('base64'),
          code_key: randomBytes(32).toString('base64')
        },
        null,
        2
      )
    )
  )
  let pkcs8: string
  let spki: string
  const privFile = join(dataDir, 'jwt-ed25519.pem')
  const pubFile = join(dataDir, 'jwt-ed25519.pub.pem')
  if (existsSync(privFile) && existsSync(pubFile)) {
    pkcs8 = readFileSync(privFile, 'utf8')
    spki = readFileSync(pubFile, 'utf8')
  } else {
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true })
    pkcs8 = await exportPKCS8(pair.privateKey)
    spki = await exportSPKI(pair.publicKey)
    writeFileSync(privFile, pkcs8, { mode: 0o600 })
    writeFileSync(pubFile, spki, { mode: 0o600 })
  }
  return {
    master_key: Buffer.from(sym.master_key, 'base64'),
    index_key: Buffer.from(sym.index_key, 'base64'),
    code_key: Buffer.from(sym.code_key, 'base64'),
    jwt: {
      private_key: await importPKCS8(pkcs8, 'EdDSA'),
      public_key: await importSPKI(spki, 'EdDSA'),
      kid: createHmac('sha256', 'kid').update(spki).digest('base64url').slice(0, 16)
    }
  }
}
