// Types of `@supolka/codemode-executor/console`: the console, a web page to review what the
// durable runtime ran and decide what waits, as a Node request handler.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { CodemodeRuntimeHandle } from '../index'

export interface ConsoleHandlerOptions {
  /**
   * The application's durable runtime. The console reads through it and decides through it:
   * an approval runs the next pass at once, with the application's connectors; a rollback
   * calls their `revert`.
   */
  runtime: CodemodeRuntimeHandle
  /**
   * The secret every request's path must start with (`<mount>/<token>/`): 16 to 256 characters
   * of `A-Z a-z 0-9 _ -`. By default a random one (read it back from `handler.token`), unless
   * `auth` is given; `false` for none, which needs `auth`.
   */
  token?: string | false
  /**
   * The host's own check, called with every request before anything is read or served; only
   * `true` lets it through (anything else, or a throw, answers 403).
   */
  auth?: (req: IncomingMessage) => boolean | Promise<boolean>
  /**
   * The path the application mounts the console under (`'/admin/codemode'`), taken off the
   * front of `req.url` when present. Leave it out where the router already takes it off
   * (Express's `app.use(path, handler)`).
   */
  basePath?: string
  /** Shown in the page's header. Default `'codemode'`. */
  label?: string
}

/** The console's request handler. */
export interface ConsoleHandler {
  (req: IncomingMessage, res: ServerResponse): void
  /** The token every request's path must start with; `undefined` when there is none (`auth` only). */
  readonly token: string | undefined
  /** The console's page, under the mount: `<basePath>/<token>/`. */
  readonly path: string
}

/**
 * The console as a Node `(req, res)` handler the application mounts under its own admin path.
 * Every answer carries a strict Content-Security-Policy; changes are POSTs checked against
 * CSRF; what programs and tools produced is shown as text.
 */
export declare function consoleHandler(options: ConsoleHandlerOptions): ConsoleHandler
