import t from 'tap'
import { KurrentEventStore } from '../../../src/infra/eventstore/kurrentdb.ts'
import { eventStoreContract } from '../../support/eventstore-contract.ts'

// Runs where EVENTSTORE_URL points at an EventStoreDB/KurrentDB server, e.g.
// EVENTSTORE_URL='kurrentdb://127.0.0.1:2113?tls=false' (docker-compose.yml starts one).
const url = process.env.EVENTSTORE_URL
if (!url) {
  t.plan(0, 'EVENTSTORE_URL is not set: no EventStoreDB server to run the contract suite against')
} else {
  eventStoreContract(t, {
    open: async () => new KurrentEventStore(url),
    reopen: async () => new KurrentEventStore(url)
  })
}
