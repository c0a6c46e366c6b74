#!/usr/bin/env node
'use strict';
// The package's command: `codemode-executor <command> [options]`. Each command lives in
// lib/cli/<command>.js and exports `main(argv)` (argv without the command name), which returns
// the exit code (or a promise of it) and prints its own errors as one line with a code.
const COMMANDS = {
  mcp: 'serve code mode in front of the MCP servers of an mcp.json file',
  console: 'serve a local web page to review, approve and roll back durable runs',
};

function usage() {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, what]) => `  ${name.padEnd(width)}  ${what}`);
  return `usage: codemode-executor <command> [options]\n\ncommands:\n${lines.join('\n')}\n\n` +
    "Run 'codemode-executor <command> --help' for a command's options.\n";
}

async function run(argv) {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(usage());
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${require('../package.json').version}\n`);
    return 0;
  }
  if (!Object.prototype.hasOwnProperty.call(COMMANDS, command)) {
    process.stderr.write(`codemode-executor: ERR_CLI_USAGE: unknown command "${command}"\n\n${usage()}`);
    return 2;
  }
  return require(`../lib/cli/${command}.js`).main(rest);
}

run(process.argv.slice(2)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code; },
  (error) => {
    const code = error && typeof error.code === 'string' ? error.code : 'ERR_CLI_FAILED';
    process.stderr.write(`codemode-executor: ${code}: ${error && error.message ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
