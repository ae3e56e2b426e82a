// Child process for the multi-process contract test: appends `count` events to one stream,
// each with the expected revision it just read, retrying on conflicts. It opens the store,
// says it is ready (`<file>.<who>.ready`) and starts only once `<file>.go` exists, so that
// the processes append at the same time.
import { existsSync, writeFileSync } from 'node:fs'
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import { WrongExpectedRevisionError } from '../../src/ports/event-store.ts'

const [file, stream, who, countText] = process.argv.slice(2)
const store = new SqliteEventStore(file, { poll_interval_ms: 0 })
writeFileSync(`${file}.${who}.ready`, '')
while (!existsSync(`${file}.go`)) await new Promise(resolve => setTimeout(resolve, 1))
let conflicts = 0
for (let i = 0; i < Number(countText); i++) {
  for (;;) {
    const events = await store.readStream(stream)
    try {
      await store.append(stream, [{ type: 'Counted', data: { who, i }, metadata: { occurred_at: new Date().toISOString() } }], {
        expected_revision: events.length === 0 ? 'no_stream' : events.length - 1
      })
      break
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError)) throw err
      conflicts++
    }
  }
}
await store.close()
process.stdout.write(JSON.stringify({ conflicts }))
