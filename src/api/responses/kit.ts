/** The building blocks of the answers' schemas (./response-schemas.ts): short names and the error body. */
import { ERROR_STATUS } from '../../protocols/errors.js';
import { StringEnum, Type, type Shape, type TSchema } from '../../protocols/schema-kit.js';

export const ref = (name: string): TSchema => Type.Unsafe({ $ref: `#/components/schemas/${name}` });
export const str = Type.String();
export const num = Type.Number();
export const int = Type.Integer();
export const bool = Type.Boolean();
export const opt = Type.Optional;
export const CLOSED = { additionalProperties: false } as const;
/** Passthrough data another part owns; its known fields are named, others may appear. */
export const open = <P extends Record<string, TSchema>>(description: string, properties: P = {} as P) =>
  Type.Object(Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)])), {
    description,
    additionalProperties: true,
  });
export const epochMs = (what: string) => Type.Number({ description: `${what}, epoch milliseconds` });
export const errorBody = Type.Object(
  {
    code: StringEnum(Object.keys(ERROR_STATUS) as (keyof typeof ERROR_STATUS)[]),
    message: str,
    details: opt(open('where/path for validation errors; the planner reasons for refusals')),
  },
  CLOSED,
);
export type ErrorBody = Shape<typeof errorBody>;
