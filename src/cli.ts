#!/usr/bin/env node
import { Command, Help, type CommanderError, type Option } from 'commander'
import { readFileSync } from 'node:fs'
import { registerDb } from './cli/db.ts'
import { registerDoctor } from './cli/doctor.ts'
import { registerAudit } from './cli/audit.ts'
import { registerMail } from './cli/mail.ts'
import { registerOperatorCommands } from './cli/operator.ts'
import { registerRoles } from './cli/roles.ts'
import { registerVerifyFile } from './cli/verify-file.ts'

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version

/**
 * The `svc` command line. One style for every command (DEVELOPERS.md "Operator
 * commands"): named options (required ones marked in `--help`), JSON on stdout, progress
 * on stderr, `error: <what> (<code>)` on stderr; exit 0 on success, 1 for a failure (an
 * unknown account, a refused change, an unreachable store), 2 for a usage error (an
 * unknown command or option, a missing or malformed value).
 */
const program = new Command()
program
  .name('svc')
  .description('Email verification service')
  .version(VERSION, '-V, --version', 'print the version')
  .showHelpAfterError('(svc --help lists the commands; svc <command> --help their options)')
  // Usage errors exit 2 (commander's own is 1); --help and --version exit 0.
  .exitOverride((err: CommanderError) => {
    process.exit(err.exitCode === 0 ? 0 : 2)
  })
  .configureHelp({
    optionDescription: (option: Option) => `${Help.prototype.optionDescription.call(new Help(), option)}${option.mandatory ? ' (required)' : ''}`
  })

registerRoles(program)
registerOperatorCommands(program)
registerVerifyFile(program)
registerMail(program)
registerDoctor(program)
registerDb(program)
registerAudit(program)

program.parseAsync().catch(err => {
  console.error(`error: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
