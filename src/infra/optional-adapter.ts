/**
 * Loads an adapter whose client library is an optional dependency (KurrentDB, MongoDB: the
 * embedded default and PostgreSQL need neither, and `npm ci --omit=optional` leaves them out).
 * @param variable the setting that asked for it (`EVENTSTORE_URL`, `MONGODB_URL`).
 * @param library the npm package the adapter needs.
 * @throws Error naming the variable and the package to install when the package is absent;
 *   any other failure of the import as it is.
 */
export async function optionalAdapter<T>(variable: string, library: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    if (e.code === 'ERR_MODULE_NOT_FOUND' && e.message.includes(`'${library}'`))
      throw new Error(`${variable} is set, but the package ${library} is not installed (an optional dependency): npm install ${library}`)
    throw err
  }
}
