/**
 * Parsing Canonical Form (PCF) of an Avro schema, per the Avro specification
 * ("Parsing Canonical Form for Schemas"). Two schemas with the same PCF read and write
 * the same bytes; the CRC-64-AVRO of the PCF is the schema's fingerprint.
 *
 * The spec's transformations, and where each happens here:
 *   [PRIMITIVES] {"type":"int"} becomes "int" (also with logicalType etc.)  -> canonObject
 *   [FULLNAMES]  names become full names (namespace applied), namespace dropped -> fullName
 *   [STRIP]      only type, name, fields, symbols, items, values, size are kept -> canonNamed
 *   [ORDER]      attributes in the order name, type, fields, symbols, items, values, size
 *   [STRINGS]    JSON strings without escapes (Avro names cannot need any)  -> JSON.stringify
 *   [INTEGERS]   no leading zeros (JSON numbers)                              -> String(size)
 *   [WHITESPACE] none outside strings
 * A named type is written in full where it is first defined (depth first, in field order)
 * and by its full name alone wherever it appears again, as Java's SchemaNormalization does.
 */

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);
const NAMED = new Set(['record', 'error', 'enum', 'fixed']);

type JsonObject = { readonly [key: string]: unknown };

export function parsingCanonicalForm(schema: unknown): string {
  return canon(schema, '', new Set());
}

function canon(schema: unknown, namespace: string, seen: Set<string>): string {
  if (typeof schema === 'string') return JSON.stringify(PRIMITIVES.has(schema) ? schema : fullName(schema, namespace));
  if (Array.isArray(schema)) return `[${schema.map((s) => canon(s, namespace, seen)).join(',')}]`;
  if (isObject(schema)) return canonObject(schema, namespace, seen);
  throw new TypeError(`not an Avro schema: ${JSON.stringify(schema)}`);
}

function canonObject(schema: JsonObject, namespace: string, seen: Set<string>): string {
  const type = schema['type'];
  if (typeof type !== 'string') return canon(type, namespace, seen); // {"type": {...}} or {"type": [...]}
  if (PRIMITIVES.has(type)) return JSON.stringify(type);
  if (type === 'array') return `{"type":"array","items":${canon(schema['items'], namespace, seen)}}`;
  if (type === 'map') return `{"type":"map","values":${canon(schema['values'], namespace, seen)}}`;
  if (NAMED.has(type)) return canonNamed(schema, type, namespace, seen);
  return JSON.stringify(fullName(type, namespace)); // {"type": "SomeNamedType"}: a reference
}

function canonNamed(schema: JsonObject, type: string, enclosing: string, seen: Set<string>): string {
  const explicit = schema['namespace'];
  const name = fullName(stringAttr(schema, 'name'), typeof explicit === 'string' ? explicit : enclosing);
  if (seen.has(name)) return JSON.stringify(name);
  seen.add(name);
  const head = `{"name":${JSON.stringify(name)},"type":${JSON.stringify(type)}`;
  if (type === 'enum') return `${head},"symbols":${JSON.stringify(schema['symbols'])}}`;
  if (type === 'fixed') return `${head},"size":${String(schema['size'])}}`;
  // Nested named types without a namespace of their own take the record's namespace.
  const inner = namespaceOf(name);
  const fields = arrayAttr(schema, 'fields').map((field) => canonField(field, inner, seen));
  return `${head},"fields":[${fields.join(',')}]}`;
}

function canonField(field: unknown, namespace: string, seen: Set<string>): string {
  if (!isObject(field)) throw new TypeError(`not an Avro field: ${JSON.stringify(field)}`);
  const name = stringAttr(field, 'name');
  return `{"name":${JSON.stringify(name)},"type":${canon(field['type'], namespace, seen)}}`;
}

/** A name with a dot is already full; otherwise the namespace (if any) is prefixed. */
function fullName(name: string, namespace: string): string {
  return name.includes('.') || namespace === '' ? name : `${namespace}.${name}`;
}

function namespaceOf(fullname: string): string {
  const dot = fullname.lastIndexOf('.');
  return dot < 0 ? '' : fullname.slice(0, dot);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringAttr(schema: JsonObject, key: string): string {
  const value = schema[key];
  if (typeof value !== 'string') throw new TypeError(`Avro schema lacks a string "${key}": ${JSON.stringify(schema)}`);
  return value;
}

function arrayAttr(schema: JsonObject, key: string): readonly unknown[] {
  const value = schema[key];
  if (!Array.isArray(value)) throw new TypeError(`Avro schema lacks an array "${key}": ${JSON.stringify(schema)}`);
  return value;
}
