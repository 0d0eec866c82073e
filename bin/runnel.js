#!/usr/bin/env node
// The `runnel` launcher: registers tsx so the TypeScript sources run as they are (no build
// step), then runs the CLI. The exit code comes from main(); nothing here calls process.exit,
// so pending output is flushed first.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../engine/cli/main.ts');
process.exitCode = await main(process.argv);
