import t from 'tap'
import { isRoleLocalPart } from '../../src/verifier/lists.ts'

t.test('common given names in the role list are not roles', async t => {
  for (const local of ['alexa', 'Alexa', 'alexa+news', 'sydney', 'paris', 'per', 'alla']) t.notOk(isRoleLocalPart(local), `${local}@example.com is a person`)
})

t.test('role local parts are still roles', async t => {
  for (const local of ['admin', 'info', 'no-reply', 'no_reply', 'noreply', 'postmaster', 'sales', 'support+tickets', 'webmaster', 'dev'])
    t.ok(isRoleLocalPart(local), `${local}@example.com is a role`)
  t.notOk(isRoleLocalPart('jane'))
})
