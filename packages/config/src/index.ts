// @poad/config: one schema per config — its fields are the TypeScript type, the flags, the
// config-file keys, the validation and the help text.

export type { Naming } from './coerce.js';
export { coerceOption, fieldLabel } from './coerce.js';
export { InputError, OptionError, UserError } from './errors.js';
export type { HelpInfo } from './help.js';
export { formatHelp } from './help.js';
export { camel, closestName, kebab } from './names.js';
export type { ParsedArgs } from './parse-args.js';
export { parseArgs } from './parse-args.js';
export type { ConfigResolverSpec, OptionLayer, ResolveOptions } from './resolve.js';
export { configResolver, isResolved, markResolved, resolveOptions } from './resolve.js';
export type { OptionSpec, OptionsSchema, OptionValues } from './schema.js';
export { defaultsOf, defineSchema, pickSchema } from './schema.js';
