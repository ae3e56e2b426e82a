import type { Projection } from './projection.ts'
import { alreadyApplied } from './projection.ts'
import type { AgentCreated, AgentRevoked } from '../domain/agent/events.ts'

/** Read model `agents`: one document per agent; `token_hash` is how agent tokens are looked up. */
export interface AgentDoc {
  [k: string]: unknown
  _id: string
  uuid: string
  user_uuid: string
  name: string
  scopes: string[]
  token_hash: string
  token_prefix: string
  created_at: string
  revoked_at: string | null
  revision: number
}

export const agentsProjection: Projection = {
  name: 'agents',
  event_types: ['AgentCreated', 'AgentRevoked'],
  async apply (event, { store }) {
    const agents = store.collection<AgentDoc>('agents')
    const e = event as unknown as AgentCreated | AgentRevoked
    const doc = await agents.get(e.data.agent_uuid)
    if (alreadyApplied(doc, event)) return
    if (e.type === 'AgentRevoked') {
      if (doc) await agents.put({ ...doc, revoked_at: e.data.revoked_at, revision: event.revision })
      return
    }
    const { agent_uuid: uuid, ...rest } = e.data
    await agents.put({ _id: uuid, uuid, ...rest, revoked_at: null, revision: event.revision })
  }
}
