/**
 * The library's values <-> their JSON on the wire. Bytes travel as base64; a request's bytes
 * may come as text instead (`inputText`, `resultText`); a partition's error as a problem body.
 * The server reads requests (`...FromJson`) and writes answers (`...ToJson`); the client the
 * other way round.
 */
import { invalidArgument, type RunlogError } from '../errors.ts';
import type { BatchAnswer, CloseRequest, Entry, PartitionHealth, Started, SubmitRequest, Taken, Ticket } from '../queue/types.ts';
import { fromBase64, toBase64 } from './bytes.ts';
import { errorFromBody, errorBody } from './problem.ts';
import type { CloseRequestJson, SubmitBody } from './requests.ts';
import type { ClosedBatchAnswer, ClosesAnswer, EntryJson, PartitionHealthJson, StartedJson, SubmittedAnswer, TakenJson } from './shapes.ts';

export function entryToJson(entry: Entry): EntryJson {
  return { ...entry, input: toBase64(entry.input), result: entry.result === null ? null : toBase64(entry.result) };
}

export function entryFromJson(json: EntryJson): Entry {
  return {
    ...json,
    input: fromBase64('entry.input', json.input),
    result: json.result === null ? null : fromBase64('entry.result', json.result),
  };
}

export function takenToJson(taken: Taken | null): TakenJson | null {
  return taken === null ? null : { lease: taken.lease, entry: entryToJson(taken.entry) };
}

export function takenFromJson(json: TakenJson | null): Taken | null {
  return json === null ? null : { lease: json.lease, entry: entryFromJson(json.entry) };
}

export function startedToJson(started: Started): StartedJson {
  return { lease: started.lease, entry: entryToJson(started.entry), attempt: started.attempt };
}

export function startedFromJson(json: StartedJson): Started {
  return { lease: json.lease, entry: entryFromJson(json.entry), attempt: json.attempt };
}

export function ticketsToJson(answers: BatchAnswer<'ticket', Ticket>[]): SubmittedAnswer {
  return { results: answers.map((answer) => ('error' in answer ? { error: errorBody(answer.error) } : answer)) };
}

export function ticketsFromJson(json: SubmittedAnswer): BatchAnswer<'ticket', Ticket>[] {
  return json.results.map((result) => ('error' in result ? { error: errorFromBody(result.error.status, result.error) } : result));
}

export function closedToJson(answers: BatchAnswer<'entry', Entry>[]): ClosedBatchAnswer {
  return {
    results: answers.map((answer) => ('error' in answer ? { error: errorBody(answer.error) } : { entry: entryToJson(answer.entry) })),
  };
}

/** closedToJson without the entries (close-batch's `entries: false`): `{ closed: true }` or the item's refusal. */
export function closesToJson(answers: BatchAnswer<'entry', Entry>[]): ClosesAnswer {
  return { results: answers.map((answer) => ('error' in answer ? { error: errorBody(answer.error) } : { closed: true as const })) };
}

/** Each item's refusal, or null once closed (what a Worker's closes need: src/queue/in-process.ts closeRuns). */
export function closesFromJson(json: ClosesAnswer): (RunlogError | null)[] {
  return json.results.map((result) => ('error' in result ? errorFromBody(result.error.status, result.error) : null));
}

export function closedFromJson(json: ClosedBatchAnswer): BatchAnswer<'entry', Entry>[] {
  return json.results.map((result) =>
    'error' in result ? { error: errorFromBody(result.error.status, result.error) } : { entry: entryFromJson(result.entry) },
  );
}

export function healthToJson(health: PartitionHealth): PartitionHealthJson {
  const { partition, mode, error } = health;
  return error === undefined ? { partition, mode } : { partition, mode, error: errorBody(error) };
}

export function healthFromJson(json: PartitionHealthJson): PartitionHealth {
  const { partition, mode, error } = json;
  return error === undefined ? { partition, mode } : { partition, mode, error: errorFromBody(error.status, error) };
}

/** A submission's JSON: bytes as `input` (base64), a string as `inputText`. */
export function submitToJson(request: SubmitRequest): SubmitBody {
  const { input, ...rest } = request;
  return typeof input === 'string' ? { ...rest, inputText: input } : { ...rest, input: toBase64(input) };
}

/** The submission a (schema-checked) body names; exactly one of `input` and `inputText`. */
export function submitFromJson(body: SubmitBody): SubmitRequest {
  const { input, inputText, ...rest } = body;
  return { ...rest, input: oneBytes('body', 'input', input, 'inputText', inputText, true)! };
}

export function closeRequestToJson(request: CloseRequest): CloseRequestJson {
  const { result, ...rest } = request;
  if (result === undefined) return rest;
  return typeof result === 'string' ? { ...rest, resultText: result } : { ...rest, result: toBase64(result) };
}

/** The close request a (schema-checked) body names; at most one of `result` and `resultText`. */
export function closeRequestFromJson(json: CloseRequestJson): CloseRequest {
  const { result, resultText, ...rest } = json;
  const bytes = oneBytes('body.request', 'result', result, 'resultText', resultText, false);
  return bytes === undefined ? rest : { ...rest, result: bytes };
}

/** Bytes given as base64 or as text: never both; `required`: exactly one. */
function oneBytes(
  where: string,
  name: string,
  base64: string | undefined,
  textName: string,
  text: string | undefined,
  required: boolean,
): Uint8Array | string | undefined {
  if (base64 !== undefined && text !== undefined) throw invalidArgument(`${where} gives both ${name} and ${textName}: give one`);
  if (base64 !== undefined) return fromBase64(`${where}.${name}`, base64);
  if (text === undefined && required) throw invalidArgument(`${where} must give ${name} (base64) or ${textName} (text)`);
  return text;
}
