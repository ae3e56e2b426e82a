import type { RecordedEvent } from '../ports/event-store.ts'
import type { AgentCreated, AgentRevoked } from '../domain/agent/events.ts'
import { credentialCollection, revoked, type CredentialDoc } from './credentials.ts'
import { foldProjection, type Folded } from '../eventsourcing/projection.ts'
import { nameOpened, newestOwned, type ReadContext } from './read-context.ts'

/** Read model `agents`: one document per agent; `token_hash` is how agent tokens are looked up; `name` sealed (opened by the queries). */
export interface AgentDoc extends CredentialDoc {
  token_hash: string
  token_prefix: string
}

/** By hash (every request with an agent token) and an account's agents newest first, paged. */
export const AGENTS = credentialCollection('agents')

function evolve(doc: Folded<AgentDoc> | null, event: RecordedEvent): AgentDoc | null {
  const e = event as unknown as AgentCreated | AgentRevoked
  if (e.type === 'AgentCreated') {
    const { agent_uuid: uuid, ...rest } = e.data
    return { _id: uuid, uuid, ...rest, revoked_at: null }
  }
  return revoked(doc, e.data.revoked_at)
}

export const agentsProjection = foldProjection<AgentDoc>({
  version: 2,
  collection: AGENTS,
  event_types: ['AgentCreated', 'AgentRevoked'],
  erase: true,
  key: 'agent_uuid',
  evolve
})

/** An agent by uuid (primary key), its name opened, or null. */
export async function getAgent(rc: ReadContext, uuid: string): Promise<AgentDoc | null> {
  return await nameOpened(rc, await rc.reads.collection<Folded<AgentDoc>>(AGENTS).get(uuid))
}

/** The agent whose token's SHA-256 is `hash` (index `token_hash`), its name still sealed. */
export async function agentByHash(rc: Pick<ReadContext, 'reads'>, hash: string): Promise<AgentDoc | null> {
  return await rc.reads.collection<Folded<AgentDoc>>(AGENTS).findOne({ token_hash: hash })
}

/** A page of an account's agents, newest first, and how many it has (index user_uuid, created_at). */
export async function agentsOf(rc: ReadContext, owner: string, page: { limit: number; offset: number }): Promise<{ items: AgentDoc[]; total: number }> {
  return await newestOwned<Folded<AgentDoc>>(rc, AGENTS, owner, page)
}
