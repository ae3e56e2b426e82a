import t from 'tap'
import { guardFault } from '../../../src/http/plugins/auth.ts'

// The guard every route declares is checked when the route registers (issue 42, item 5):
// a method that changes something is never guarded by read scopes alone.
t.test('a write guarded by a read scope alone is refused at registration', async t => {
  t.match(guardFault('PATCH', '/api/keys/:uuid', { auth: 'any', scope: 'api_keys:read' }), /read scope api_keys:read alone/)
  t.match(guardFault(['POST', 'PUT'], '/x', { auth: 'api_key', scope: 'results:read' }), /write_scope/)
  t.equal(guardFault('PATCH', '/api/keys/:uuid', { auth: 'any', scope: 'api_keys:read', write_scope: 'api_keys:create' }), null, 'with its write scope')
  t.match(guardFault('PATCH', '/x', { auth: 'any', scope: 'api_keys:read', write_scope: 'webhooks:read' }), /read scope webhooks:read as its write scope/)
})

t.test('reads, writes with a write scope, sessions and self-guarded routes pass', async t => {
  t.equal(guardFault('GET', '/api/keys', { auth: 'any', scope: 'api_keys:read' }), null)
  t.equal(guardFault(['GET', 'HEAD'], '/api/jobs', { auth: 'any', scope: 'results:read' }), null)
  t.equal(guardFault('DELETE', '/api/keys/:uuid', { auth: 'any', scope: 'api_keys:revoke' }), null)
  t.equal(guardFault('POST', '/api/agents', { auth: 'jwt' }), null, 'a session holds every scope')
  t.equal(guardFault('POST', '/mcp', { auth: 'any' }), null, 'a route that names no scope asks its own (each MCP tool)')
  t.match(guardFault('POST', '/x', undefined), /no config.auth/)
  t.equal(guardFault('GET', '/docs/json', undefined), null)
})
