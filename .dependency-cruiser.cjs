/**
 * The layer rules of ../shared/design/layers.json as dependency-cruiser rules, run by
 * scripts/layers.ts in `npm test`. The parts:
 *   src/domain/      pure deciders and events: imports nothing outside the domain and src/lib
 *   src/lib/         pure helpers (hashing, tokens, signatures, fault points): no I/O, imported by every layer
 *   src/ports/       the interfaces adapters implement
 *   src/infra/       the adapters (SQLite, KurrentDB, MongoDB, NATS, SMTP, Stripe, files)
 *   src/commands/    load, decide, append: ports and the domain only; one aggregate per folder, which
 *                    reads another only through that one's read.ts (never its commands)
 *   src/flows/       operations over several streams: the first fact, then a pure reaction from it (commands, the domain)
 *   src/eventsourcing/ the machinery (README.md: the guarantees): the command handler and its
 *                    group commit, stream loading, the projection runner and rebuild, the
 *                    relay, flows' reactions run to their end: ports and pure helpers only
 *   src/projections/ read models and their queries: ports and the domain only
 *   src/verifier/    the engine
 *   src/workers/     relay, verifier, webhooks, mailer: commands, the engine, ports
 *   src/http/        routes, schemas, plugins: commands, projections, ports
 *   src/client/      the CLI's client of the public API: HTTP only
 *   src/main.ts, src/compose.ts, src/core.ts, src/cli.ts, src/config.ts: the composition root
 */
const part = name => `^src/${name}/`
const rule = (name, comment, from, to) => ({ name, comment, severity: 'error', from, to })

module.exports = {
  forbidden: [
    rule('no-circular', 'an import circle makes the order of evaluation an accident', {}, { circular: true }),
    rule(
      'domain-stays-pure',
      'the domain imports nothing outside the domain (and the pure helpers of src/lib)',
      { path: part('domain') },
      { path: '^src/', pathNot: [part('domain'), part('lib')] }
    ),
    rule('lib-stays-pure', 'pure helpers import only pure helpers', { path: part('lib') }, { path: '^src/', pathNot: [part('lib')] }),
    rule(
      'ports-are-interfaces',
      'a port names the domain and other ports, never an adapter or a layer above',
      { path: part('ports') },
      { path: '^src/', pathNot: [part('ports'), part('domain'), part('lib')] }
    ),
    rule(
      'commands-use-ports',
      'commands depend on ports; adapters are wired at the root',
      { path: part('commands') },
      { path: [part('infra'), part('http'), part('workers'), part('client'), '^src/(main|cli|compose|core)\\.ts$', '^src/cli/'] }
    ),
    rule(
      'aggregates-read-each-other-only',
      "an aggregate's commands never import another aggregate's commands: they read its state through its read.ts; an operation that writes several aggregates is a flow (src/flows/)",
      { path: '^src/commands/([^/]+)/' },
      { path: '^src/commands/[^/]+/', pathNot: ['^src/commands/$1/', '^src/commands/[^/]+/read\\.ts$'] }
    ),
    rule(
      'commands-never-start-flows',
      'a flow calls commands, never the reverse: an operation over several streams is a flow',
      { path: part('commands') },
      { path: part('flows') }
    ),
    rule(
      'flows-use-commands',
      'a flow carries out commands through the aggregates; adapters are wired at the root',
      { path: part('flows') },
      { path: [part('infra'), part('http'), part('workers'), part('client'), '^src/(main|cli|compose|core)\\.ts$', '^src/cli/'] }
    ),
    rule(
      'reactions-are-pure',
      "a reaction decides from its trigger and the state it is given: the domain's types, pure helpers, the flow's own types",
      { path: '^src/flows/[^/]+/react\\.ts$' },
      { path: '^src/', pathNot: [part('domain'), part('lib'), '^src/eventsourcing/flow\\.ts$'] }
    ),
    rule(
      'machinery-knows-no-business',
      'the event-sourcing machinery imports ports and pure helpers only',
      { path: part('eventsourcing') },
      { path: '^src/', pathNot: [part('eventsourcing'), part('ports'), part('lib')] }
    ),
    rule(
      'commands-use-the-engine-pure-parts',
      'commands may parse an address and read the result types and lists of the engine, never run a check',
      { path: part('commands') },
      { path: part('verifier'), pathNot: ['^src/verifier/(syntax|result|lists)\\.ts$'] }
    ),
    rule(
      'projections-read-only',
      'the read side never writes and depends on ports',
      { path: part('projections') },
      { path: [part('commands'), part('infra'), part('http'), part('workers'), part('client'), '^src/(main|cli|compose|core)\\.ts$', '^src/cli/'] }
    ),
    rule(
      'engine-decides-verdicts',
      'the engine decides verdicts, not writes',
      { path: part('verifier') },
      { path: [part('commands'), part('projections'), part('http'), part('workers'), part('client'), '^src/(main|cli|compose|core)\\.ts$', '^src/cli/'] }
    ),
    rule(
      'workers-use-ports',
      'workers get adapters from the root',
      { path: part('workers') },
      { path: [part('infra'), part('http'), part('client'), '^src/(main|cli|compose|core)\\.ts$', '^src/cli/'] }
    ),
    rule(
      'http-uses-ports',
      'routes get adapters from the root',
      { path: part('http') },
      { path: [part('infra'), part('workers'), part('client'), '^src/(main|cli|compose|core)\\.ts$', '^src/cli/'] }
    ),
    rule(
      'client-speaks-http',
      'a client of the public API speaks HTTP only',
      { path: part('client') },
      { path: '^src/', pathNot: [part('client'), part('lists'), part('lib')] }
    ),
    rule(
      'adapters-implement-ports',
      'an adapter implements a port; it calls no command, route or worker',
      { path: part('infra') },
      { path: [part('commands'), part('http'), part('workers'), part('projections'), part('client')] }
    ),
    rule(
      'collections-named-by-projections',
      "nothing outside src/projections names a collection: the read store is reached through a projection's queries (the machinery in src/eventsourcing applies the collections projections declare, naming none)",
      { path: '^src/', pathNot: [part('projections'), part('eventsourcing'), part('infra'), part('ports'), '^src/(main|cli|compose|core)\\.ts$', '^src/cli/'] },
      { path: '^src/ports/read-store\\.ts$', dependencyTypesNot: ['type-only'] }
    )
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^src/client/generated/', '\\.d\\.ts$'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] }
  }
}
