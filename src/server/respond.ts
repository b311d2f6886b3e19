/**
 * Writing answers: JSON with the store clock's `runlog-now`, and refusals as problem bodies
 * (application/problem+json) with the status and headers of the wire's table.
 */
import type { ServerResponse } from 'node:http';
import { RunlogError } from '../errors.ts';
import { PROBLEM_CONTENT_TYPE, errorBody, problemHeaders, statusOf } from '../wire/index.ts';
import { HttpRefusal } from './http-refusal.ts';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
export const NOW_HEADER = 'runlog-now';
export const REQUEST_ID_HEADER = 'runlog-request-id';

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  send(response, status, JSON_CONTENT_TYPE, JSON.stringify(body), headers);
}

/** A RunlogError's answer; anything else is Internal, its message naming the request (the stack goes to the server's log). */
export function sendProblem(response: ServerResponse, error: RunlogError): void {
  const status = error instanceof HttpRefusal ? error.status : statusOf(error.code);
  const headers = { ...problemHeaders(error.code), ...(error instanceof HttpRefusal ? error.headers : {}) };
  send(response, status, PROBLEM_CONTENT_TYPE, JSON.stringify(errorBody(error, status)), headers);
}

/** The RunlogError a failure answers as: itself, or Internal naming the request. */
export function asRunlogError(error: unknown, requestId: string): RunlogError {
  return error instanceof RunlogError ? error : new RunlogError('Internal', `internal error, request ${requestId}`);
}

function send(response: ServerResponse, status: number, contentType: string, text: string, headers: Record<string, string>): void {
  if (response.headersSent) return void response.end();
  response.writeHead(status, { ...headers, 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
