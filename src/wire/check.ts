/**
 * Compiled checks of JSON against the wire schemas: a value that does not fit is
 * InvalidArgument naming the field by its path (`body.lease.epoch`) and showing the value.
 * Each schema is compiled once, where the check is made.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { invalidArgument } from '../errors.ts';
import { describe } from '../describe.ts';

export type Check<T extends TSchema> = (value: unknown) => Static<T>;

/** A check of `schema`; `where` names the whole value in messages (`body`, `query`). */
export function compileCheck<T extends TSchema>(schema: T, where: string): Check<T> {
  const compiled = TypeCompiler.Compile(schema);
  return (value) => {
    if (compiled.Check(value)) return value;
    throw invalidArgument(messageOf(firstError(compiled, value), where));
  };
}

function firstError(compiled: TypeCheck<TSchema>, value: unknown): ValueError {
  const error = compiled.Errors(value).First();
  if (error === undefined) throw new Error('a value the schema refused has no error');
  return error;
}

/** `/lease/epoch` in `body` -> `body.lease.epoch`; `/agents/0` -> `body.agents[0]`. */
export function fieldName(where: string, path: string): string {
  return path
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : `${name}.${part}`), where);
}

function messageOf(error: ValueError, where: string): string {
  const field = fieldName(where, error.path);
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return `${field} is missing (a required field)`;
    case ValueErrorType.ObjectAdditionalProperties:
      return `${field} is not a field this request takes (unknown field), got ${describe(error.value)}`;
    default:
      return `${field} must be ${expected(error.schema)}, got ${describe(error.value)}`;
  }
}

/** What a schema asks for, in words. */
function expected(schema: TSchema): string {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as TSchema[]).map(expected).join(' or ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const range = [
    schema.minimum === undefined ? '' : ` >= ${schema.minimum}`,
    schema.maximum === undefined ? '' : ` <= ${schema.maximum}`,
  ].join('');
  switch (schema.type) {
    case 'integer':
      return `an integer${range}`;
    case 'number':
      return `a number${range}`;
    case 'string':
      return 'a string';
    case 'boolean':
      return 'a boolean';
    case 'array':
      return 'an array';
    case 'null':
      return 'null';
    case 'object':
      return 'an object';
    default:
      return 'valid';
  }
}
