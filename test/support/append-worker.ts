// Child process for the multi-process contract test: appends `count` events to one stream,
// each with the expected revision it just read, retrying on conflicts.
import { SqliteEventStore } from '../../src/infra/eventstore/sqlite.ts'
import { WrongExpectedRevisionError } from '../../src/infra/eventstore/port.ts'

const [file, stream, who, countText] = process.argv.slice(2)
const store = new SqliteEventStore(file, { poll_interval_ms: 0 })
let conflicts = 0
for (let i = 0; i < Number(countText); i++) {
  for (;;) {
    const events = await store.readStream(stream)
    try {
      await store.append(stream, [{ type: 'Counted', data: { who, i }, metadata: { occurred_at: new Date().toISOString() } }],
        { expected_revision: events.length === 0 ? 'no_stream' : events.length - 1 })
      break
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError)) throw err
      conflicts++
    }
  }
}
await store.close()
process.stdout.write(JSON.stringify({ conflicts }))
