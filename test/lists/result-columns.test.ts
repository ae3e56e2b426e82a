import t from 'tap'
import { FLAG_COLUMNS } from '../../src/lists/merge.ts'
import { FLAGS } from '../../src/verifier/vocabulary.ts'

// Both downloads (a list's file with its results, a batch's results as CSV) give each flag a
// column of its own: every flag the result vocabulary can answer, none it cannot. The oracle:
// the vocabulary the engine answers with.
t.test('the flag columns are the result vocabulary’s flags', async t => {
  t.same([...FLAG_COLUMNS].sort(), Object.keys(FLAGS).sort())
})
