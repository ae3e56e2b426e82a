#!/usr/bin/env node
// The `svc` command: runs src/cli.ts with Node's type stripping (Node.js 24+).
import '../src/cli.ts'
