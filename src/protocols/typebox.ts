/**
 * The one module that imports TypeBox: everything else reaches it through schema-kit.ts. `npm run build`
 * replaces this file's output (dist/protocols/typebox.js) with a loader of one minified script holding exactly
 * these exports, run with its V8 code cache (scripts/bundle-typebox.mjs), so a worker thread loads one
 * pre-compiled file instead of TypeBox's ~220 modules. Run from src (tests, the TS loader), it is this file as
 * written: the package's own objects and registries.
 */
import * as TypeBox from '@sinclair/typebox';

export {
  FormatRegistry,
  Kind,
  TypeRegistry,
  type ObjectOptions,
  type SchemaOptions,
  type Static,
  type TSchema,
  type TUnsafe,
} from '@sinclair/typebox';
export { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
export { Errors, ValueErrorType, type ValueError } from '@sinclair/typebox/errors';

/**
 * The type builders torus uses: TypeBox's own functions (the ones its `Type` calls), named as on `Type`. Not
 * `Type` itself, whose object holds every builder (template literals, mapped types, functions, ...) and so keeps
 * them all in the bundle: this list is ~30 % less code for every worker to load. A schema that needs another
 * builder adds it here (the type checker names the missing one).
 */
export const Type = {
  Any: TypeBox.Any,
  Array: TypeBox.Array,
  Boolean: TypeBox.Boolean,
  Composite: TypeBox.Composite,
  Integer: TypeBox.Integer,
  Intersect: TypeBox.Intersect,
  Literal: TypeBox.Literal,
  Not: TypeBox.Not,
  Null: TypeBox.Null,
  Number: TypeBox.Number,
  Object: TypeBox.Object,
  Omit: TypeBox.Omit,
  Optional: TypeBox.Optional,
  Partial: TypeBox.Partial,
  Pick: TypeBox.Pick,
  Record: TypeBox.Record,
  Required: TypeBox.Required,
  String: TypeBox.String,
  Tuple: TypeBox.Tuple,
  Union: TypeBox.Union,
  Unknown: TypeBox.Unknown,
  Unsafe: TypeBox.Unsafe,
} as const;
