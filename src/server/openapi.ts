/**
 * The OpenAPI 3.1 document of the API, generated from the route table and the same TypeBox
 * schemas that validate requests, so it cannot drift from what the server does. (OpenAPI 3.1
 * schemas are JSON Schema 2020-12, which TypeBox writes; its own markers are symbols, which
 * JSON leaves out.)
 */
import type { TSchema } from '@sinclair/typebox';
import { ErrorBody, PROBLEM_CONTENT_TYPE } from '../wire/index.ts';
import type { Route } from './route.ts';
import { JSON_CONTENT_TYPE } from './respond.ts';

/** The version of the wire contract (the `/v1` of the paths). */
export const API_VERSION = '1.0.0';

export type OpenApiDocument = Record<string, unknown> & { openapi: '3.1.0'; info: object; paths: Record<string, Record<string, unknown>> };

export function openApiDocument(routes: readonly Route[]): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  return {
    openapi: '3.1.0',
    info: {
      title: 'runlog',
      version: API_VERSION,
      description: 'An event-sourced run queue over HTTP: JSON in and out, bytes as base64, refusals as problem bodies.',
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Problem: plain(ErrorBody) },
    },
    security: [{ bearer: [] }],
    paths,
  };
}

function operation(route: Route): Record<string, unknown> {
  const ok = route.kind === 'json' ? { [JSON_CONTENT_TYPE]: { schema: plain(route.answer) } } : { [route.contentType]: {} };
  return {
    operationId: operationId(route),
    summary: route.summary,
    'x-runlog-roles': route.access === 'public' ? [] : route.access,
    ...(route.access === 'public' ? { security: [] } : {}),
    parameters: [...pathParameters(route.path), ...queryParameters(route)],
    ...(route.body === undefined
      ? {}
      : { requestBody: { required: true, content: { 'application/json': { schema: plain(route.body) } } } }),
    responses: {
      '200': { description: route.summary, content: ok },
      default: {
        description: 'a refusal: a RunlogError as a problem body',
        content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } },
      },
    },
  };
}

/** `POST /v1/tenants/{tenant}/entries/{entryId}/cancel` -> `postTenantsTenantEntriesEntryIdCancel`. */
function operationId(route: Route): string {
  if (route.operationId !== undefined) return route.operationId;
  const words = route.path.split(/[/{}-]+/).filter((word) => word !== '' && word !== 'v1');
  return route.method.toLowerCase() + words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
}

function pathParameters(path: string): unknown[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
}

function queryParameters(route: Route): unknown[] {
  const required = new Set(route.query.required ?? []);
  return Object.entries(route.query.properties).map(([name, schema]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema: plain(schema),
  }));
}

/** The schema as plain JSON (TypeBox's symbol markers dropped). */
function plain(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema));
}
