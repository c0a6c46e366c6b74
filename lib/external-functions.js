'use strict';
// Programs that call host functions by bare name (`external_getWeather(input)`), as the code
// modes of TanStack AI (lib/tanstack) and Mastra (lib/mastra) write them, run on the executor's
// native form: each name is a function in the program's scope taking one input object, whose
// call goes to the host through one provider and resolves the host function's value (or throws
// its error's message).

const { messageOf } = require('./util.js');

// The namespace the functions are called through.
const PROVIDER = '__external_functions';
// A function's name must be a JavaScript identifier: it becomes one in the program.
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

// The program for `code` (the body of an async function, JavaScript or TypeScript) with `names`
// in scope. All of it before `code` sits on `code`'s first line, so the program's line numbers
// in errors are its own; `code` is the body of an async function of its own, so a program that
// declares one of the names shadows it rather than failing.
function programCalling(code, names) {
  const functions = names.map((name) => `${name} = (input) => ${PROVIDER}.${name}(input === undefined ? {} : input)`);
  const declared = functions.length === 0 ? '' : `const ${functions.join(', ')}; `;
  return `async () => { ${declared}return await (async () => {${code}\n})(); }`;
}

// The request's providers for `names`.
function providersFor(names) {
  return names.length === 0 ? [] : [{ name: PROVIDER, tools: names }];
}

// Answers one call (the native form's dispatch reply): `call` with the program's input.
async function answerCall(call, argsJson) {
  try {
    const args = JSON.parse(argsJson);
    const value = await call(Array.isArray(args) ? args[0] : args);
    return JSON.stringify({ result: value });
  } catch (error) {
    return JSON.stringify({ error: messageOf(error) });
  }
}

// What ended a failed run (the report's errorKind), as an error's name.
const ERROR_NAMES = {
  syntax: 'SyntaxError',
  timeout: 'TimeoutError',
  memory: 'MemoryLimitError',
  bound: 'LimitError',
  unsettleable: 'UnsettleableError',
};

function errorName(report) {
  return ERROR_NAMES[report.errorKind] ?? 'Error';
}

// The program's line an error message names (`(line N, column M)`), when it names one.
function errorLine(message) {
  const match = /\(line (\d+), column \d+\)/.exec(message);
  return match === null ? undefined : Number(match[1]);
}

module.exports = { IDENTIFIER, programCalling, providersFor, answerCall, errorName, errorLine };
