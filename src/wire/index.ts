/**
 * The HTTP wire of runlog (docs: WIRE contract in README "HTTP API"), shared by the server
 * (src/server) and the client (src/client): the schemas of every request and answer, the
 * library <-> JSON conversions, and the error code <-> HTTP status table. It imports only the
 * queue's types, the errors and validation: never the server or the client.
 */
export * from './shapes.ts';
export * from './requests.ts';
export { compileCheck, fieldName, type Check } from './check.ts';
export { fromBase64, toBase64 } from './bytes.ts';
export { PROBLEM_CONTENT_TYPE, errorBody, errorFromBody, problemHeaders, statusOf } from './problem.ts';
export {
  closeRequestFromJson,
  closeRequestToJson,
  closedFromJson,
  closedToJson,
  closesFromJson,
  closesToJson,
  entryFromJson,
  entryToJson,
  healthFromJson,
  healthToJson,
  startedFromJson,
  startedToJson,
  submitFromJson,
  submitToJson,
  takenFromJson,
  takenToJson,
  ticketsFromJson,
  ticketsToJson,
} from './convert.ts';
