import { Type, type TUnsafe } from '../src/plugin/index.js'

/**
 * A string enum as plain JSON Schema `{type: 'string', enum}` (TypeBox's own `Union` of literals becomes `anyOf`,
 * whose ajv messages are less helpful in `lanegate validate`), typed as the union of its values.
 */
export function StringEnum<const T extends readonly string[]> (values: T, options: { description: string, default?: T[number] }): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
}
