/** The HTTP API of runlog: startServer over a RunQueueApi (see routes.ts for the routes). */
export { startServer, type RunningServer, type ServerOptions } from './start-server.ts';
export { ROUTES } from './routes.ts';
export { bodyLimitOf } from './read-request.ts';
export { openApiDocument, API_VERSION } from './openapi.ts';
export type { Authenticator, Caller, Logger, LogLevel, Role } from './types.ts';
