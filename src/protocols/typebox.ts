/**
 * The one module that imports TypeBox: everything else reaches it through schema-kit.ts. `npm run build`
 * replaces this file's output (dist/protocols/typebox.js) with one ESM bundle of exactly these exports
 * (scripts/bundle-typebox.mjs), so a worker thread parses one file instead of TypeBox's ~270 modules. Run from
 * src (tests, the TS loader), it is a plain re-export of the package: same objects, same registries.
 */
export { FormatRegistry, Kind, Type, TypeRegistry, type ObjectOptions, type SchemaOptions, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
export { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
export { Errors, ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
