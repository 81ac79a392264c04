// Checks a value against one of the JSON Schemas pydantic generates for agrun's models
// (./schemas.js): the subset those schemas use, nothing more.

/**
 * Why `value` does not match `schema`, or null when it does.
 * @param {object} schema a schema of ./schemas.js (its `$defs` resolve `$ref`s)
 * @returns {string | null} e.g. "role: must be one of user, assistant, system, tool"
 */
export function schemaProblem(schema, value, path = '', root = schema) {
  if (schema.$ref) return schemaProblem(resolve(root, schema.$ref), value, path, root);
  if (schema.anyOf) {
    const matches = schema.anyOf.some((option) => schemaProblem(option, value, path, root) === null);
    return matches ? null : `${where(path)}does not match any allowed shape`;
  }
  if (schema.enum && !schema.enum.includes(value)) {
    return `${where(path)}must be one of ${schema.enum.join(', ')}, got ${JSON.stringify(value)}`;
  }
  if (schema.type && !hasType(value, schema.type)) {
    return `${where(path)}must be ${schema.type}, got ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}`;
  }
  if (typeof value === 'number' && schema.minimum !== undefined && value < schema.minimum) {
    return `${where(path)}must be at least ${schema.minimum}, got ${value}`;
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) return `${where(path)}is too short`;
    if (schema.maxLength !== undefined && value.length > schema.maxLength) return `${where(path)}is too long`;
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) return `${where(path)}does not match ${schema.pattern}`;
  }
  if (Array.isArray(value) && schema.items) {
    for (let i = 0; i < value.length; i += 1) {
      const problem = schemaProblem(schema.items, value[i], `${path}[${i}]`, root);
      if (problem) return problem;
    }
  }
  if (schema.type === 'object' && value && typeof value === 'object') return objectProblem(schema, value, path, root);
  return null;
}

function objectProblem(schema, value, path, root) {
  const properties = schema.properties ?? {};
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(value, name)) return `${join(path, name)}: is required`;
  }
  for (const [name, item] of Object.entries(value)) {
    if (Object.hasOwn(properties, name)) {
      const problem = schemaProblem(properties[name], item, join(path, name), root);
      if (problem) return problem;
    } else if (schema.additionalProperties === false) {
      return `${join(path, name)}: unknown field`;
    }
  }
  return null;
}

function hasType(value, type) {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      return true;
  }
}

function resolve(root, ref) {
  const name = ref.replace('#/$defs/', '');
  const target = root.$defs?.[name];
  if (!target) throw new Error(`schema reference ${ref} does not resolve`);
  return target;
}

const join = (path, name) => (path ? `${path}.${name}` : name);
const where = (path) => (path ? `${path}: ` : '');
