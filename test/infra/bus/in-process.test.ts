import t from 'tap'
import { InProcessBus } from '../../../src/infra/bus/in-process.ts'
import type { Bus } from '../../../src/ports/bus.ts'
import { busContract } from '../../support/bus-contract.ts'

// Instances of one group share one in-process bus (they are "processes" of one deployment).
const buses = new Map<string, InProcessBus>()
busContract(t, async (group, log) => {
  let bus = buses.get(group)
  if (!bus) {
    bus = new InProcessBus(log ?? (() => {}))
    buses.set(group, bus)
  }
  const shared = bus
  const view: Bus = {
    publish: e => shared.publish(e),
    consume: (o, h) => shared.consume(o, h),
    redeliveries: () => shared.redeliveries(),
    close: async () => {}
  }
  return view
})
