/** /openapi.json: an OpenAPI 3.1 document made from the route table and its schemas. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROUTES } from '../../src/server/routes.ts';
import { serverOn } from './fixtures.ts';

describe('server: /openapi.json', () => {
  it('is an OpenAPI 3.1 document naming every route of the table, with its roles, parameters, body and answer', async (t) => {
    const { call } = await serverOn(t);
    const answer = await call('GET', '/openapi.json');
    assert.equal(answer.status, 200);
    const doc = answer.body;
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.title, 'runlog');
    assert.equal(typeof doc.info.version, 'string');
    assert.deepEqual(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer' });
    assert.deepEqual(Object.keys(doc.components.schemas.Problem.properties).sort(), [
      'code',
      'message',
      'owner',
      'retriable',
      'status',
      'title',
      'type',
    ]);

    const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operation })),
    );
    assert.deepEqual(operations.map(({ route }) => route).sort(), ROUTES.map((route) => `${route.method} ${route.path}`).sort());
    const ids = operations.map(({ operation }) => operation.operationId);
    assert.equal(new Set(ids).size, ids.length, 'operation ids are unique');

    for (const route of ROUTES) {
      const operation = doc.paths[route.path][route.method.toLowerCase()];
      const where = `${route.method} ${route.path}`;
      assert.equal(operation.summary, route.summary, where);
      assert.deepEqual(operation['x-runlog-roles'], route.access === 'public' ? [] : route.access, where);
      if (route.access === 'public') assert.deepEqual(operation.security, [], `${where} needs no token`);
      const pathNames = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name);
      const parameters = operation.parameters as { name: string; in: string; required: boolean }[];
      assert.deepEqual(
        parameters.filter((p) => p.in === 'path').map((p) => p.name),
        pathNames,
        where,
      );
      assert.ok(
        parameters.every((p) => p.in !== 'path' || p.required),
        where,
      );
      assert.deepEqual(
        parameters.filter((p) => p.in === 'query').map((p) => p.name),
        Object.keys(route.query.properties),
        where,
      );
      assert.equal(operation.requestBody !== undefined, route.body !== undefined, where);
      if (route.body) assert.equal(operation.requestBody.content['application/json'].schema.type, 'object', where);
      assert.ok(operation.responses['200'].content, where);
      assert.equal(operation.responses.default.content['application/problem+json'].schema.$ref, '#/components/schemas/Problem', where);
    }
  });

  it('describes request bodies as the server checks them: no unknown field, the required ones, bytes as base64', async (t) => {
    const { call } = await serverOn(t);
    const doc = (await call('GET', '/openapi.json')).body;
    const submit = doc.paths['/v1/submit'].post.requestBody.content['application/json'].schema;
    assert.equal(submit.additionalProperties, false);
    assert.deepEqual(submit.required, ['tenant', 'thread', 'agent']);
    assert.equal(submit.properties.input.contentEncoding, 'base64');
    const closed = doc.paths['/v1/tenants/{tenant}/entries/{entryId}/closed'].get.parameters.find(
      (p: { name: string }) => p.name === 'waitMs',
    );
    assert.deepEqual(closed.schema, { type: 'integer', minimum: 0, maximum: 60000, description: 'longest wait, ms' });
    const entry =
      doc.paths['/v1/tenants/{tenant}/entries/{entryId}'].get.responses['200'].content['application/json; charset=utf-8'].schema;
    assert.ok(entry.required.includes('entryId') && entry.properties.result.anyOf.length === 2);
  });
});
